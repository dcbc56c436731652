// FrameSender's shared state: its consumers, the frames they hold, and the thread serving them.
#pragma once

#include <gpuhandle/frame_transport.h>

#include "sender_file_cache.h"
#include "unix_socket.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace gpuhandle {

namespace detail {

// A consumer that keeps sending what fails validation is dropped after this many.
inline constexpr uint32_t kMaxBadMessagesPerPeer = 16;
inline constexpr uint32_t kMaxInFlightLimit = 1024;
inline constexpr uint32_t kMaxPeersLimit = 64; // holders are a 64-bit mask
// How long a caps or bye message may wait for room in a consumer's queue.
inline constexpr WaitDuration kControlTimeout = std::chrono::seconds(1);
// How long after its hello a consumer's first frame waits for its Features: a consumer of this
// version answers a hello that offers times at once; one of version 1 that keeps no files sends
// nothing, and gets its first frame this much later.
inline constexpr auto kGreetingWait = std::chrono::seconds(1);

struct Peer {
	UniqueFd socket{};
	uint32_t inFlight = 0;
	uint32_t badMessages = 0;
	uint32_t cachedFiles = 0; // the file cache slots it announced (0: fds every time)
	bool timing = false;      // it reads frame times: TimedFrame and Timeline
	// Its Features came (or it is taken for a consumer that sends none): until then its
	// first frame waits for them, bounded, so that it comes in the form it asked for
	bool greeted = false;
	std::chrono::steady_clock::time_point acceptedAt{};
};

// A frame some consumers still hold: its release gate is signalled when `holders` empties.
struct Outstanding {
	uint64_t id = 0;
	uint64_t holders = 0; // bit i: peers[i] holds it
	std::optional<Frame> frame{};
};

} // namespace detail

struct FrameSender::Impl {
	using Peer = detail::Peer;
	using Outstanding = detail::Outstanding;
	FrameSenderOptions options;
	detail::BoundSocket listener;
	UniqueFd wake; // eventfd: tells the thread to look at `stopping` and the caps again
	std::atomic<bool> stopping{ false };
	std::thread thread;

	mutable std::mutex mutex;
	std::condition_variable peersChanged;
	std::vector<Peer> peers;              // maxPeers slots; a free slot has no socket
	std::vector<Outstanding> outstanding; // maxPeers * maxInFlightPerPeer slots
	uint64_t nextId = 1;
	FrameSenderStats stats;
	WireMessage message;       // scratch for send(), under mutex
	WireMessage timedMessage;  // send()'s frame with its times, under mutex
	WireMessage cachedMessage; // send()'s frame naming cached files, under mutex
	// The frames' timeline (setStreamTiming), sent to each consumer that reads times once its
	// Features came, and to all of them when it changes; under mutex
	std::optional<StreamTiming> timeline;
	// Consumers are accepted once caps are known (options.waitForCaps); under mutex
	bool accepting = true;
	WireMessage attachment;           // send()'s attachment, under mutex
	detail::SenderFileCache files;    // under mutex
	detail::ReceivedMessage incoming; // the thread's
	// Frames every consumer released, whose gates are signalled once the mutex is let go
	// (signalReleased): a gate's ReleaseListener (gpuhandlesink drops a buffer there) must not
	// run under this lock. Reserved for every outstanding frame and a few more: no allocation.
	std::vector<Frame> released;

	void log(const Error &e) const
	{
		if (options.log)
			options.log(e);
	}

	void roomChanged() const
	{
		if (options.roomChanged)
			options.roomChanged();
	}

	uint32_t connected() const
	{
		return static_cast<uint32_t>(
			std::count_if(peers.begin(), peers.end(),
				      [](const Peer &p) { return p.socket.isValid(); }));
	}

	// Releases slot `i`'s frames and closes its socket (under mutex).
	void dropPeer(size_t i, const Error &why)
	{
		log(why);
		peers[i] = Peer{};
		files.dropPeer(i);
		const uint64_t bit = uint64_t(1) << i;
		for (Outstanding &o : outstanding) {
			if (o.holders & bit)
				releaseHolder(o, bit);
		}
		stats.peersLost++;
		peersChanged.notify_all();
		roomChanged();
	}

	// Sends `message`, encoded last (caps, end of stream, timeline), to every connected
	// consumer (only those that read times: `timingOnly`) (under mutex). Such a message must
	// not be lost: a queue that stays full for kControlTimeout (all of them together) is a
	// consumer that stopped reading, and it is dropped. Returns how many got it.
	uint32_t sendToAll(bool timingOnly = false)
	{
		uint32_t told = 0;
		const Deadline deadline = Deadline::after(detail::kControlTimeout);
		for (size_t i = 0; i < peers.size(); ++i) {
			if (!peers[i].socket.isValid() || (timingOnly && !peers[i].timing))
				continue;
			if (Status s = detail::sendMessageWithin(peers[i].socket.get(), message,
								 deadline.remaining());
			    s.ok())
				told++;
			else
				dropPeer(i, s.error());
		}
		return told;
	}

	// Under mutex; the gate is signalled by signalReleased() once the lock is let go.
	void releaseHolder(Outstanding &o, uint64_t bit)
	{
		o.holders &= ~bit;
		if (!o.holders && o.frame) {
			released.push_back(std::move(*o.frame));
			o.frame.reset();
		}
	}

	// Not under mutex: signals the gates of the frames releaseHolder() set aside, one at a
	// time (whoever calls it takes what any thread set aside).
	void signalReleased()
	{
		for (;;) {
			std::optional<Frame> frame;
			{
				std::lock_guard lock(mutex);
				if (released.empty())
					return;
				frame = std::move(released.back());
				released.pop_back();
			}
			(void)frame->release().signal();
		}
	}

	Result<uint32_t> sendLocked(const Frame &frame, const FrameTiming *timing,
				    std::span<const std::byte> extra);
	// frame_sender_peers.cpp, the internal thread's (and send()'s for awaitFeatures), under
	// mutex but for run():
	// Reads what consumer `i` sent until its Features came, up to kGreetingWait after its
	// hello, so that its first frame comes in the form it asks for.
	void awaitFeatures(size_t i);
	// Takes a connection off the listener: checks the peer, greets it.
	void accept();
	// Reads one message of peer `i`, which poll found readable. One only: a consumer usually
	// has one Release queued, and reading on until the queue is empty cost a failed recvmsg per
	// frame; the next poll round finds any message left (poll is level triggered).
	void serve(size_t i);
	// The message serve() read: Features or a Release.
	Status handle(size_t i);
	// The thread: accepts, serves, signals released frames' gates, until `stopping`.
	void run();
};

} // namespace gpuhandle
