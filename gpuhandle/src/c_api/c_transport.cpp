// C API: gpuhandle_frame_sender and gpuhandle_frame_receiver over FrameSender / FrameReceiver.
#include <gpuhandle/frame_transport.h>

#include "c_internal.h"

#include <algorithm>
#include <cstring>
#include <span>

using namespace gpuhandle;
using namespace gpuhandle::capi;

struct gpuhandle_frame_sender {
	std::unique_ptr<FrameSender> value;
};
struct gpuhandle_frame_receiver {
	std::unique_ptr<FrameReceiver> value;
};

namespace {

PeerRule peerRule(const uint32_t *uids, size_t count, bool anyUser)
{
	PeerRule rule;
	if (uids)
		rule.allowUids.assign(uids, uids + count);
	rule.anyUser = anyUser;
	return rule;
}

WaitDuration nanoseconds(uint64_t ns)
{
	return ns > uint64_t(WaitDuration::max().count()) ? WaitDuration::max()
							  : WaitDuration(static_cast<int64_t>(ns));
}

// Clears the outputs, refuses NULL arguments by name, and runs `body` with no exception leaving.
template<typename Body>
gpuhandle_status call(const char *function, gpuhandle_error **error,
		      std::initializer_list<std::pair<const void *, const char *>> required,
		      Body &&body) noexcept
{
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		for (const auto &[pointer, name] : required) {
			if (!pointer)
				return failNull(error, function, name);
		}
		return body();
	});
}

// Both connect functions; `name` is the caller's, for error messages.
gpuhandle_status connectReceiver(const char *name, const gpuhandle_frame_receiver_options *options,
				 uint32_t cachedFiles, gpuhandle_frame_receiver **out,
				 gpuhandle_error **error) noexcept
{
	if (out)
		*out = nullptr;
	return call(name, error, { { options, "options" }, { out, "out" } },
		    [&]() -> gpuhandle_status {
			    if (!options->socket_path)
				    return failNull(error, name, "options->socket_path");
			    FrameReceiverOptions o;
			    o.socketPath = options->socket_path;
			    o.cachedFiles = cachedFiles;
			    if (options->connect_timeout_ns)
				    o.connectTimeout = nanoseconds(options->connect_timeout_ns);
			    o.peers = peerRule(options->allow_uids, options->num_allow_uids,
					       options->any_user);
			    auto receiver = FrameReceiver::connect(std::move(o));
			    if (!receiver)
				    return fail(error, std::move(receiver).error());
			    *out = new gpuhandle_frame_receiver{ std::move(*receiver) };
			    return GPUHANDLE_OK;
		    });
}

} // namespace

extern "C" {

gpuhandle_status gpuhandle_frame_sender_new(const gpuhandle_frame_sender_options *options,
					    gpuhandle_frame_sender **out,
					    gpuhandle_error **error) noexcept
{
	if (out)
		*out = nullptr;
	return call(__func__, error, { { options, "options" }, { out, "out" } },
		    [&]() -> gpuhandle_status {
			    if (!options->socket_path)
				    return failNull(error, "gpuhandle_frame_sender_new",
						    "options->socket_path");
			    FrameSenderOptions o;
			    o.socketPath = options->socket_path;
			    if (options->socket_mode)
				    o.socketMode = options->socket_mode;
			    if (options->max_peers)
				    o.maxPeers = options->max_peers;
			    if (options->max_in_flight)
				    o.maxInFlightPerPeer = options->max_in_flight;
			    if (options->caps)
				    o.caps = options->caps;
			    o.peers = peerRule(options->allow_uids, options->num_allow_uids,
					       options->any_user);
			    auto sender = FrameSender::create(std::move(o));
			    if (!sender)
				    return fail(error, std::move(sender).error());
			    *out = new gpuhandle_frame_sender{ std::move(*sender) };
			    return GPUHANDLE_OK;
		    });
}

void gpuhandle_frame_sender_free(gpuhandle_frame_sender *sender) noexcept
{
	delete sender;
}

gpuhandle_status gpuhandle_frame_sender_send(gpuhandle_frame_sender *sender,
					     const gpuhandle_frame *frame, uint32_t *delivered,
					     gpuhandle_error **error) noexcept
{
	return gpuhandle_frame_sender_send_with_attachment(sender, frame, nullptr, 0, delivered,
							   error);
}

gpuhandle_status gpuhandle_frame_sender_send_with_attachment(gpuhandle_frame_sender *sender,
							     const gpuhandle_frame *frame,
							     const void *attachment, size_t size,
							     uint32_t *delivered,
							     gpuhandle_error **error) noexcept
{
	if (delivered)
		*delivered = 0;
	if (size && !attachment)
		return failNull(error, "gpuhandle_frame_sender_send_with_attachment", "attachment");
	return call(__func__, error, { { sender, "sender" }, { frame, "frame" } },
		    [&]() -> gpuhandle_status {
			    const std::span<const std::byte> bytes(
				    static_cast<const std::byte *>(attachment), size);
			    auto sent = sender->value->send(frame->value, bytes);
			    if (!sent)
				    return fail(error, std::move(sent).error());
			    if (delivered)
				    *delivered = *sent;
			    return GPUHANDLE_OK;
		    });
}

gpuhandle_status gpuhandle_frame_sender_set_caps(gpuhandle_frame_sender *sender, const char *caps,
						 gpuhandle_error **error) noexcept
{
	return call(__func__, error, { { sender, "sender" }, { caps, "caps" } },
		    [&]() -> gpuhandle_status {
			    Status s = sender->value->setCaps(caps);
			    return s ? GPUHANDLE_OK : fail(error, std::move(s).error());
		    });
}

gpuhandle_status gpuhandle_frame_sender_end_stream(gpuhandle_frame_sender *sender, uint32_t *told,
						   gpuhandle_error **error) noexcept
{
	if (told)
		*told = 0;
	return call(__func__, error, { { sender, "sender" } }, [&]() -> gpuhandle_status {
		Result<uint32_t> n = sender->value->endStream();
		if (!n)
			return fail(error, std::move(n).error());
		if (told)
			*told = *n;
		return GPUHANDLE_OK;
	});
}

gpuhandle_status gpuhandle_frame_sender_wait_for_peers(gpuhandle_frame_sender *sender,
						       uint32_t count, uint64_t timeout_ns,
						       gpuhandle_error **error) noexcept
{
	return call(__func__, error, { { sender, "sender" } }, [&]() -> gpuhandle_status {
		Status s = sender->value->waitForPeers(count, nanoseconds(timeout_ns));
		return s ? GPUHANDLE_OK : fail(error, std::move(s).error());
	});
}

void gpuhandle_frame_sender_get_stats(const gpuhandle_frame_sender *sender,
				      gpuhandle_frame_sender_stats *out) noexcept
{
	if (!out)
		return;
	*out = {};
	if (!sender)
		return;
	const FrameSenderStats s = sender->value->stats();
	*out = { s.framesSent, s.framesSkipped, s.releases,       s.peersAccepted, s.peersRefused,
		 s.peersLost,  s.badMessages,   s.peersConnected, s.peersWithRoom };
}

void gpuhandle_frame_sender_get_file_stats(const gpuhandle_frame_sender *sender,
					   gpuhandle_frame_transport_file_stats *out) noexcept
{
	if (!out)
		return;
	*out = {};
	if (!sender)
		return;
	const FrameSenderStats s = sender->value->stats();
	*out = { s.filesRemembered, s.framesOverKeptFiles, 0 };
}

gpuhandle_status gpuhandle_frame_receiver_connect(const gpuhandle_frame_receiver_options *options,
						  gpuhandle_frame_receiver **out,
						  gpuhandle_error **error) noexcept
{
	return connectReceiver(__func__, options, kWireMaxCachedFiles, out, error);
}

gpuhandle_status gpuhandle_frame_receiver_connect_with_file_cache(
	const gpuhandle_frame_receiver_options *options, uint32_t cached_files,
	gpuhandle_frame_receiver **out, gpuhandle_error **error) noexcept
{
	return connectReceiver(__func__, options, cached_files, out, error);
}

void gpuhandle_frame_receiver_free(gpuhandle_frame_receiver *receiver) noexcept
{
	delete receiver;
}

gpuhandle_status gpuhandle_frame_receiver_receive(gpuhandle_frame_receiver *receiver,
						  uint64_t timeout_ns, gpuhandle_frame **out,
						  gpuhandle_error **error) noexcept
{
	if (out)
		*out = nullptr;
	return call(__func__, error, { { receiver, "receiver" }, { out, "out" } },
		    [&]() -> gpuhandle_status {
			    auto frame = receiver->value->receive(nanoseconds(timeout_ns));
			    if (!frame)
				    return fail(error, std::move(frame).error());
			    if (*frame)
				    *out = newFrame(std::move(**frame));
			    return GPUHANDLE_OK;
		    });
}

size_t gpuhandle_frame_receiver_get_caps(const gpuhandle_frame_receiver *receiver, char *buffer,
					 size_t size) noexcept
{
	if (!receiver)
		return 0;
	try {
		const std::string caps = receiver->value->caps();
		if (buffer && size) {
			const size_t n = std::min(caps.size(), size - 1);
			std::memcpy(buffer, caps.data(), n);
			buffer[n] = '\0';
		}
		return caps.size();
	} catch (...) {
		if (buffer && size)
			buffer[0] = '\0';
		return 0;
	}
}

void gpuhandle_frame_receiver_get_stats(const gpuhandle_frame_receiver *receiver,
					gpuhandle_frame_receiver_stats *out) noexcept
{
	if (!out)
		return;
	*out = {};
	if (!receiver)
		return;
	const FrameReceiverStats s = receiver->value->stats();
	*out = { s.framesReceived, s.releasesSent, s.badMessages };
}

void gpuhandle_frame_receiver_get_file_stats(const gpuhandle_frame_receiver *receiver,
					     gpuhandle_frame_transport_file_stats *out) noexcept
{
	if (!out)
		return;
	*out = {};
	if (!receiver)
		return;
	const FrameReceiverStats s = receiver->value->stats();
	*out = { s.filesRemembered, s.framesOverKeptFiles, s.filesHeld };
}

size_t gpuhandle_frame_receiver_get_attachment(const gpuhandle_frame_receiver *receiver,
					       void *buffer, size_t size) noexcept
{
	if (!receiver)
		return 0;
	const std::span<const std::byte> bytes = receiver->value->attachment();
	if (buffer && size)
		std::memcpy(buffer, bytes.data(), std::min(bytes.size(), size));
	return bytes.size();
}

} // extern "C"
