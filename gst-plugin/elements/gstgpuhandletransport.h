// What gpuhandlesink and gpuhandlesrc share: the allowed-uids property and its parsing.
#pragma once

#include <gpuhandle/frame_transport.h>
#include <gpuhandle/result.h>

#include <string>

#include <gst/gst.h>

namespace gpuhandle::gst {

// "1000, 1001" as a peer rule: those uids besides this process's own; empty: its own only.
// InvalidArgument names the entry that is not a uid.
Result<PeerRule> parseAllowedUids(const std::string &text);

// The `allowed-uids` string property, described by `blurb`.
GParamSpec *allowedUidsParamSpec(const char *blurb);

} // namespace gpuhandle::gst
