/* A C99 program built against the installed gpuhandle with pkg-config only. */
#include <gpuhandle/gpuhandle.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
	unsigned char pixels[64 * 4];
	gpuhandle_cpu_bytes_desc desc;
	gpuhandle_resource *resource = NULL;
	gpuhandle_resource *refused = NULL;
	gpuhandle_error *error = NULL;
	memset(&desc, 0, sizeof(desc));
	desc.data = pixels;
	desc.size = sizeof(pixels);
	if (gpuhandle_resource_new_cpu_bytes(&desc, &resource, &error) != GPUHANDLE_OK)
		return 1;
	gpuhandle_resource_unref(resource);
	desc.data = NULL;
	if (gpuhandle_resource_new_cpu_bytes(&desc, &refused, &error) == GPUHANDLE_OK || !error)
		return 1;
	printf("c consumer: refused with \"%s\"\n", gpuhandle_error_get_message(error));
	gpuhandle_error_unref(error);
	return 0;
}
