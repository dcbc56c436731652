/* Example: the C API from a C program: build a frame from raw values, see validation, hand it to
 * another thread with an acquire fence and a release gate, read it back there.
 *
 * What it shows: every gpuhandle object in C is opaque and refcounted (..._ref / ..._unref), and
 * every fallible call returns a gpuhandle_status plus, on failure, an error object that names the
 * field and says what is wrong. The pixel memory is the program's own (malloc); the resource
 * borrows it and an "anchor" callback frees it when the last reference goes, on whichever thread
 * that is.
 * What to look at: main() top to bottom, then consumer(). Compiled as C99.
 */
#define _POSIX_C_SOURCE 200809L /* pthreads under -std=c99 */
#include <gpuhandle/gpuhandle.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { WIDTH = 640, HEIGHT = 360 };
#define FORMAT_NV12 1u /* gpuhandle's PixelFormat number for NV12 (the C++ enum's value) */

static int g_freed; /* how many times the anchor freed the pixels (must end at 1) */

static void free_pixels(void *data)
{
	free(data);
	++g_freed;
}

static int fail(const char *what, gpuhandle_error *error)
{
	fprintf(stderr, "%s: %s\n", what, gpuhandle_error_get_message(error));
	gpuhandle_error_unref(error);
	return 1;
}

/* Consumer thread: owns one frame reference; waits, reads, releases, drops it. */
static void *consumer(void *arg)
{
	gpuhandle_frame *frame = arg;
	gpuhandle_sync_point *acquire = NULL;
	gpuhandle_release_gate *gate = NULL;
	gpuhandle_plane_view uv;
	gpuhandle_cpu_planes_desc planes;
	long ok = 0;
	/* 1. Wait (bounded: 2 s) until the producer says the pixels are written. */
	if (gpuhandle_frame_get_acquire(frame, &acquire, NULL) == GPUHANDLE_OK &&
	    gpuhandle_sync_point_wait(acquire, 2000000000LL, NULL) == GPUHANDLE_OK &&
	    /* 2. Read back: plane 1 (UV) is CPU plane 1 of resource 0. */
	    gpuhandle_frame_get_plane(frame, 1, &uv) == GPUHANDLE_OK &&
	    gpuhandle_resource_get_cpu_planes(gpuhandle_frame_get_resource(frame, uv.resource),
					      &planes) == GPUHANDLE_OK) {
		const unsigned char *row = planes.planes[uv.subresource].data;
		ok = row[uv.offset] == 0x80 &&
		     row[uv.offset + uv.stride * (HEIGHT / 2 - 1)] == 0x80;
		printf("consumer: UV plane stride %u, first byte 0x%02x\n", uv.stride,
		       row[uv.offset]);
	}
	/* 3. Done reading: let the producer reuse the memory (NULL: no GPU work still reads it). */
	if (gpuhandle_frame_get_release(frame, &gate, NULL) == GPUHANDLE_OK)
		gpuhandle_release_gate_signal(gate, NULL, NULL);
	gpuhandle_release_gate_unref(gate);
	gpuhandle_sync_point_unref(acquire);
	gpuhandle_frame_unref(frame);
	return (void *)ok;
}

int main(void)
{
	gpuhandle_error *error = NULL;
	unsigned char *pixels = malloc((size_t)WIDTH * HEIGHT * 3 / 2);
	if (!pixels)
		return 1;

	/* 1. A resource over two CPU planes (Y, then interleaved UV) the program allocated. */
	gpuhandle_cpu_planes_desc planes = { 0 };
	planes.numPlanes = 2;
	planes.planes[0].data = pixels;
	planes.planes[0].stride = WIDTH;
	planes.planes[0].rows = HEIGHT;
	planes.planes[1].data = pixels + WIDTH * HEIGHT;
	planes.planes[1].stride = WIDTH;
	planes.planes[1].rows = HEIGHT / 2;
	planes.anchor.destroy = free_pixels; /* runs once, when the last reference goes */
	planes.anchor.data = pixels;
	gpuhandle_resource *memory = NULL;
	if (gpuhandle_resource_new_cpu_planes(&planes, &memory, &error) != GPUHANDLE_OK)
		return fail("cpu planes", error);

	/* 2. Validation: a plane naming a resource the frame does not have is refused. */
	gpuhandle_frame_desc desc = { FORMAT_NV12, WIDTH,
				      HEIGHT,      GPUHANDLE_COLORIMETRY_UNKNOWN,
				      1,           { memory, NULL, NULL, NULL },
				      2,           { { 0, 0, 0, WIDTH }, { 1, 1, 0, WIDTH } } };
	gpuhandle_frame *frame = NULL;
	if (gpuhandle_frame_new(&desc, &frame, &error) == GPUHANDLE_OK)
		return 1;
	printf("refused as expected: %s (field '%s'): %s\n",
	       gpuhandle_status_name(gpuhandle_error_get_code(error)),
	       gpuhandle_error_get_field(error), gpuhandle_error_get_message(error));
	gpuhandle_error_unref(error);
	error = NULL;
	desc.planes[1].resource = 0; /* fixed: resource 0, its CPU plane 1 */
	gpuhandle_status status = gpuhandle_frame_new(&desc, &frame, &error);
	gpuhandle_resource_unref(memory); /* the frame holds its own reference */
	if (status != GPUHANDLE_OK)
		return fail("frame", error);

	/* 3. The same frame with an acquire fence (CPU-signalled here) and a release gate. */
	gpuhandle_cpu_fence *written = NULL;
	gpuhandle_sync_point *acquire = NULL, *released = NULL;
	gpuhandle_release_gate *gate = NULL;
	gpuhandle_frame *synced = NULL;
	if (gpuhandle_cpu_fence_new(&written, &error) != GPUHANDLE_OK ||
	    gpuhandle_cpu_fence_get_point(written, &acquire, &error) != GPUHANDLE_OK ||
	    gpuhandle_release_gate_new(&gate, &error) != GPUHANDLE_OK ||
	    gpuhandle_release_gate_get_released(gate, &released, &error) != GPUHANDLE_OK ||
	    gpuhandle_frame_with_sync(frame, acquire, gate, &synced, &error) != GPUHANDLE_OK)
		return fail("fences", error);
	gpuhandle_frame_unref(frame);

	/* 4. Hand a reference to the consumer before the pixels exist; write; signal. */
	pthread_t thread;
	if (pthread_create(&thread, NULL, consumer, gpuhandle_frame_ref(synced)) != 0)
		return 1;
	for (size_t i = 0; i < (size_t)WIDTH * HEIGHT * 3 / 2; ++i)
		pixels[i] = i < (size_t)WIDTH * HEIGHT ? 16 : 0x80; /* black */
	gpuhandle_cpu_fence_signal(written);

	/* 5. Producer: bounded wait until the consumer let go, before reusing or freeing. */
	status = gpuhandle_sync_point_wait(released, GPUHANDLE_DEFAULT_WAIT_TIMEOUT_NS, &error);
	void *read_ok = NULL;
	pthread_join(thread, &read_ok);
	gpuhandle_sync_point_unref(released);
	gpuhandle_sync_point_unref(acquire);
	gpuhandle_release_gate_unref(gate);
	gpuhandle_cpu_fence_unref(written);
	gpuhandle_frame_unref(synced); /* the last reference: the anchor frees the pixels */
	if (status != GPUHANDLE_OK)
		return fail("release", error);
	printf("consumer read the pixels: %s; pixels freed %d time(s)\n", read_ok ? "yes" : "no",
	       g_freed);
	const int ok = read_ok && g_freed == 1;
	printf("%s\n", ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
