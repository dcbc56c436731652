// The gpuhandleav plugin: registers gpuhandleavdec and gpuhandleavfilter, the elements that link
// FFmpeg, apart from the gpuhandle plugin so that its elements load without FFmpeg's libraries.
#include "gpuhandle_i18n.h"
#include "gstgpuhandleavdec.h"
#include "gstgpuhandleavfilter.h"

#include <gst/gpuhandle/gstgpuhandlememory.h>

namespace {

gboolean pluginInit(GstPlugin *plugin)
{
	gst_gpu_handle_init();
	gpuhandle::i18n::bindDomain();
	return GST_ELEMENT_REGISTER(gpuhandleavdec, plugin) &&
	       GST_ELEMENT_REGISTER(gpuhandleavfilter, plugin);
}

} // namespace

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, gpuhandleav,
		  "FFmpeg on GPU frames: gpuhandleavdec decodes with FFmpeg, on a hardware "
		  "device where asked, into GpuHandle or system memory; gpuhandleavfilter runs "
		  "FFmpeg filter graphs on GPU frames",
		  pluginInit, VERSION, "MIT/X11", GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
