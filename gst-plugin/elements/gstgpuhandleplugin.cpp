// The gpuhandle plugin: registers gpuhandleupload, gpuhandledownload, gpuhandlesink, gpuhandlesrc.
#include "gpuhandle_i18n.h"
#include "gstgpuhandleelements.h"
#include "gstgpuhandlesink.h"
#include "gstgpuhandlesrc.h"

#include <gst/gpuhandle/gstgpuhandlememory.h>

namespace {

gboolean pluginInit(GstPlugin *plugin)
{
	gst_gpu_handle_init();
	// As GStreamer's plugins do: bind the domain (UTF-8), leave the program's own domain alone.
	gpuhandle::i18n::bindDomain();
	return gst_element_register(plugin, "gpuhandleupload", GST_RANK_NONE,
				    gst_gpu_handle_upload_get_type()) &&
	       gst_element_register(plugin, "gpuhandledownload", GST_RANK_NONE,
				    gst_gpu_handle_download_get_type()) &&
	       gst_element_register(plugin, "gpuhandlesink", GST_RANK_NONE,
				    gst_gpu_handle_sink_get_type()) &&
	       gst_element_register(plugin, "gpuhandlesrc", GST_RANK_NONE,
				    gst_gpu_handle_src_get_type());
}

} // namespace

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, gpuhandle,
		  "Typed GPU frames across APIs: GpuHandle memory in and out of GStreamer's "
		  "system, DMABuf, GL and Vulkan memories",
		  pluginInit, VERSION, "MIT", GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
