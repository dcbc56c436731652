// Bytes handed to gst_memory_new_wrapped(), and whether GStreamer gave them back (then freed).
#pragma once

#include <gst/gst.h>

namespace gpuhandle::test {

struct WrappedBytes {
	guint8 *bytes = nullptr;
	bool freed = false;
};

// The memory's GDestroyNotify, with the WrappedBytes as its user data.
inline void freeWrapped(gpointer data)
{
	auto *wrapped = static_cast<WrappedBytes *>(data);
	g_free(wrapped->bytes);
	wrapped->freed = true;
}

} // namespace gpuhandle::test
