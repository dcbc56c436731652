// Test helper: whether a backend opens on its default device here, probed in a forked child.
#pragma once

#include <gpuhandle/backends/backend.h>

#include "skip_probe.h"

#include <string>

namespace gpuhandle::test {

// 0 when `kind` opens, else 77 after printing "SKIP: <why>" (1 if the child crashed). In a child,
// so that this process starts no driver thread before Check forks its tests.
inline int probeBackend(BackendKind kind)
{
	return probeInChild([kind] {
		Result<BackendRef> opened = openBackend(kind);
		return opened.ok() ? std::string() : opened.error().message();
	});
}

} // namespace gpuhandle::test
