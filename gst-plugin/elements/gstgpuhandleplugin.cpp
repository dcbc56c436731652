// The gpuhandle plugin: registers gpuhandleupload, gpuhandledownload, gpuhandlesink and
// gpuhandlesrc (FFmpeg's elements are the gpuhandleav plugin's: gstgpuhandleavplugin.cpp).
#include "gpuhandle_i18n.h"
#include "gstgpuhandledownload.h"
#include "gstgpuhandlesink.h"
#include "gstgpuhandlesrc.h"
#include "gstgpuhandleupload.h"

#include <gst/gpuhandle/gstgpuhandlememory.h>

namespace {

gboolean pluginInit(GstPlugin *plugin)
{
	gst_gpu_handle_init();
	// As GStreamer's plugins do: bind the domain (UTF-8), leave the program's own domain alone.
	gpuhandle::i18n::bindDomain();
	// Each element registers itself (GST_ELEMENT_REGISTER_DEFINE in its own file).
	return GST_ELEMENT_REGISTER(gpuhandleupload, plugin) &&
	       GST_ELEMENT_REGISTER(gpuhandledownload, plugin) &&
	       GST_ELEMENT_REGISTER(gpuhandlesink, plugin) &&
	       GST_ELEMENT_REGISTER(gpuhandlesrc, plugin);
}

} // namespace

GST_PLUGIN_DEFINE(
	GST_VERSION_MAJOR, GST_VERSION_MINOR, gpuhandle,
	"Typed GPU frames across APIs: gpuhandleupload and gpuhandledownload move "
	"frames between GpuHandle memory and GStreamer's system, DMABuf, GL, Vulkan, "
	"CUDA and VA memories; gpuhandlesink and gpuhandlesrc carry them between processes "
	"(FFmpeg's decoders and filters on GPU frames: the gpuhandleav plugin)",
	pluginInit, VERSION, "MIT/X11", GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
