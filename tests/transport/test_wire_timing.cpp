// The wire format's timing records: TimedFrame and Timeline round trip field by field, Features
// has two forms (the first as version 1 wrote it), the hello's offer sits where an earlier
// receiver reads a large bound, and every truncation or byte flip of the new messages is refused
// or stays a valid message.
#include "wire_test_frames.h"

#include <cmath>
#include <limits>

// Last: Check's fail() macro breaks standard headers included after it.
#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::test;

namespace {

FrameTiming someTiming()
{
	FrameTiming t;
	t.pts = 33'366'666;
	t.dts = 0;
	t.duration = kNoTime;
	t.offset = 1;
	t.offsetEnd = 2;
	t.clockTime = 123'456'789'012;
	return t;
}

StreamTiming someTimeline()
{
	StreamTiming t;
	t.flags = 1;
	t.rate = 2.0;
	t.appliedRate = 0.5;
	t.base = 7;
	t.offset = 8;
	t.start = 1'000;
	t.stop = 9'000'000'000;
	t.time = 500;
	t.position = 1'001;
	t.duration = kNoTime;
	t.latency = 33'000'000;
	return t;
}

uint32_t headerType(const WireMessage &m)
{
	uint16_t type = 0;
	std::memcpy(&type, m.bytes.data() + 6, sizeof type);
	return type;
}

} // namespace

START_TEST(a_timed_frame_is_a_frame_with_its_times_after_the_id)
{
	const FrameTiming timing = someTiming();
	WireMessage plain, timed;
	const Frame frame = nv12Shm();
	ck_assert_ok(encodeFrame(frame, 42, true, plain));
	ck_assert_ok(encodeFrame(frame, 42, true, {}, &timing, timed));
	ck_assert_uint_eq(headerType(plain), uint32_t(WireType::Frame));
	ck_assert_uint_eq(headerType(timed), uint32_t(WireType::TimedFrame));
	ck_assert_uint_eq(timed.size, plain.size + kWireTimingBytes);
	// Everything after the times is the frame as a Frame message carries it.
	const size_t idEnd = kWireHeaderBytes + 8;
	ck_assert_int_eq(std::memcmp(timed.bytes.data() + idEnd + kWireTimingBytes,
				     plain.bytes.data() + idEnd, plain.size - idEnd),
			 0);
	ck_assert(decodeHeader(timed.data(), timed.numFds).value() == WireType::TimedFrame);
	Received r = receive(timed);
	auto decoded = decodeFrame(r.data(), r.fdList());
	ck_assert_ok(decoded);
	ck_assert_uint_eq(decoded->id, 42);
	ck_assert(decoded->wantsRelease);
	ck_assert(decoded->timing.has_value());
	ck_assert(*decoded->timing == timing);
	ck_assert_uint_eq(decoded->frame.width(), frame.width());
	// A plain frame has no times.
	Received p = receive(plain);
	ck_assert(!decodeFrame(p.data(), p.fdList()).value().timing.has_value());
	// Every time may be "none".
	const FrameTiming none{};
	ck_assert_ok(encodeFrame(frame, 1, false, {}, &none, timed));
	Received n = receive(timed);
	ck_assert(decodeFrame(n.data(), n.fdList()).value().timing.value() == none);
}
END_TEST

START_TEST(the_timeline_round_trips_and_bad_ones_are_refused)
{
	const StreamTiming line = someTimeline();
	WireMessage m;
	ck_assert_ok(encodeTimeline(line, m));
	ck_assert_uint_eq(m.size, kWireHeaderBytes + kWireTimelineBytes);
	ck_assert(decodeHeader(m.data(), 0).value() == WireType::Timeline);
	ck_assert(decodeTimeline(m.data()).value() == line);
	ck_assert_str_eq(wireTypeName(WireType::Timeline), "timeline");
	ck_assert_str_eq(wireTypeName(WireType::TimedFrame), "timed frame");
	// What GStreamer would refuse is refused at both ends.
	for (double rate : { 0.0, std::numeric_limits<double>::infinity(), std::nan("") }) {
		StreamTiming bad = line;
		bad.rate = rate;
		ck_assert_error(encodeTimeline(bad, m), ErrorCode::InvalidArgument, "rate");
		bad = line;
		bad.appliedRate = rate;
		ck_assert_error(encodeTimeline(bad, m), ErrorCode::InvalidArgument, "rate");
	}
	StreamTiming backwards = line;
	backwards.start = backwards.stop + 1;
	ck_assert_error(encodeTimeline(backwards, m), ErrorCode::InvalidArgument, "start");
	// The same refusals when a peer writes them by hand: a rate of 0 (offset 24, the rate's
	// bits), a start past the stop (offset 56: start, 64: stop).
	ck_assert_ok(encodeTimeline(line, m));
	WireMessage zero = m;
	const uint64_t zeroBits = 0;
	std::memcpy(zero.bytes.data() + 24, &zeroBits, sizeof zeroBits);
	ck_assert_error(decodeTimeline(zero.data()), ErrorCode::InvalidArgument, "rate");
	WireMessage late = m;
	const uint64_t start = line.stop + 1;
	std::memcpy(late.bytes.data() + 56, &start, sizeof start);
	ck_assert_error(decodeTimeline(late.data()), ErrorCode::InvalidArgument, "start");
	// Negative rates (reverse playback) are timelines too.
	StreamTiming reverse = line;
	reverse.rate = -1.0;
	ck_assert_ok(encodeTimeline(reverse, m));
	ck_assert(decodeTimeline(m.data()).value().rate == -1.0);
}
END_TEST

START_TEST(features_have_two_forms)
{
	WireMessage m;
	// The first form, as version 1 wrote it: the cached files alone.
	ck_assert_ok(encodeFeatures(8, m));
	ck_assert_uint_eq(m.size, kWireHeaderBytes + 4);
	WireFeatures first = decodeFeatures(m.data()).value();
	ck_assert_uint_eq(first.cachedFiles, 8);
	ck_assert(!first.timing && !first.extended);
	// The longer one: files (0 allowed) and flags.
	ck_assert_ok(encodeFeatures(WireFeatures{ 0, true, true }, m));
	ck_assert_uint_eq(m.size, kWireHeaderBytes + 8);
	WireFeatures longer = decodeFeatures(m.data()).value();
	ck_assert_uint_eq(longer.cachedFiles, 0);
	ck_assert(longer.timing && longer.extended);
	ck_assert_ok(encodeFeatures(WireFeatures{ kWireMaxCachedFiles, false, true }, m));
	ck_assert(!decodeFeatures(m.data()).value().timing);
	// Flags of a later version are ignored, not refused.
	ck_assert_ok(encodeFeatures(WireFeatures{ 4, true, true }, m));
	const uint32_t later = kWireFeatureTiming | 0x80u;
	std::memcpy(m.bytes.data() + kWireHeaderBytes + 4, &later, sizeof later);
	ck_assert(decodeFeatures(m.data()).value().timing);
	// Out of range in either form; times only in the longer form.
	ck_assert_error(encodeFeatures(WireFeatures{ 0, false, false }, m),
			ErrorCode::InvalidArgument, "cachedFiles");
	ck_assert_error(encodeFeatures(WireFeatures{ kWireMaxCachedFiles + 1, true, true }, m),
			ErrorCode::InvalidArgument, "cachedFiles");
	ck_assert_error(encodeFeatures(WireFeatures{ 4, true, false }, m),
			ErrorCode::InvalidArgument, "timing");
	// A longer form naming too many files, and one with a byte too many, written by hand.
	ck_assert_ok(encodeFeatures(WireFeatures{ 4, true, true }, m));
	WireMessage many = m;
	const uint32_t files = kWireMaxCachedFiles + 1;
	std::memcpy(many.bytes.data() + kWireHeaderBytes, &files, sizeof files);
	ck_assert_error(decodeFeatures(many.data()), ErrorCode::InvalidArgument, "cachedFiles");
	WireMessage longest = m;
	longest.size += 1;
	std::memcpy(longest.bytes.data() + 8, &longest.size, sizeof longest.size);
	ck_assert_error(decodeFeatures(longest.data()), ErrorCode::InvalidArgument, "size");
}
END_TEST

// A receiver of version 1 reads the in-flight field with bit 31 masked off and checks only that
// it is not 0: the offer of times (bit 30) reads as a large bound it never uses.
START_TEST(the_hello_offers_times_where_an_earlier_receiver_does_not_look)
{
	WireMessage m;
	ck_assert_ok(encodeHello("video/x-raw", 4, m, true, true));
	uint32_t inFlight = 0;
	std::memcpy(&inFlight, m.bytes.data() + kWireHeaderBytes, sizeof inFlight);
	ck_assert_uint_eq(inFlight, 4u | kWireHelloFileCache | kWireHelloTiming);
	ck_assert_uint_ne(inFlight & ~kWireHelloFileCache, 0);
	WireHello hello = decodeHello(m.data()).value();
	ck_assert_uint_eq(hello.maxInFlight, 4);
	ck_assert(hello.fileCache && hello.timing);
	ck_assert_ok(encodeHello("video/x-raw", 4, m));
	ck_assert(!decodeHello(m.data()).value().timing);
	ck_assert_error(encodeHello("video/x-raw", kWireHelloTiming | 1, m),
			ErrorCode::InvalidArgument, "maxInFlight");
}
END_TEST

START_TEST(every_truncation_of_the_new_messages_is_refused)
{
	const FrameTiming timing = someTiming();
	const Frame frame = nv12Shm();
	WireMessage timed, line, features;
	ck_assert_ok(encodeFrame(frame, 3, true, {}, &timing, timed));
	ck_assert_ok(encodeTimeline(someTimeline(), line));
	ck_assert_ok(encodeFeatures(WireFeatures{ 2, true, true }, features));
	unsigned tried = 0, refused = 0;
	for (uint32_t len = 0; len < timed.size; ++len) {
		Received cut = receive(timed);
		cut.size = len;
		if (len >= kWireHeaderBytes)
			cut.patch<uint32_t>(8, len);
		refused += !decodeFrame(cut.data(), cut.fdList()).ok();
		++tried;
	}
	for (const WireMessage *m : { &line, &features }) {
		for (uint32_t len = 0; len < m->size; ++len) {
			WireMessage cut = *m;
			cut.size = len;
			if (len >= kWireHeaderBytes)
				std::memcpy(cut.bytes.data() + 8, &len, sizeof len);
			// A longer Features cut to the first form's length is the first form.
			if (m == &features && len == kWireHeaderBytes + 4)
				continue;
			refused += m == &line ? !decodeTimeline(cut.data()).ok()
					      : !decodeFeatures(cut.data()).ok();
			++tried;
		}
	}
	ck_assert_uint_eq(refused, tried);
	ck_assert_uint_gt(tried, 200);
}
END_TEST

START_TEST(every_byte_of_the_new_messages_flipped)
{
	const FrameTiming timing = someTiming();
	WireMessage timed, line;
	const Frame frame = nv12Shm(); // its fds travel with the message: alive while it is read
	ck_assert_ok(encodeFrame(frame, 3, true, {}, &timing, timed));
	ck_assert_ok(encodeTimeline(someTimeline(), line));
	const int before = openFdCount();
	unsigned framesAccepted = 0, linesAccepted = 0;
	for (uint32_t i = 0; i < timed.size; ++i) {
		Received r = receive(timed);
		r.bytes[i] ^= std::byte{ 0xff };
		auto decoded = decodeFrame(r.data(), r.fdList());
		// A flip in the times themselves is another valid frame; elsewhere the frame's own
		// checks hold (the hostile suite's).
		if (decoded.ok()) {
			ck_assert(decoded->timing.has_value());
			framesAccepted++;
		}
	}
	for (uint32_t i = 0; i < line.size; ++i) {
		WireMessage m = line;
		m.bytes[i] ^= std::byte{ 0xff };
		if (auto decoded = decodeTimeline(m.data()); decoded.ok()) {
			ck_assert(std::isfinite(decoded->rate) && decoded->rate != 0.0);
			linesAccepted++;
		}
	}
	// The six times (48 bytes) and at least the timeline's plain numbers pass.
	ck_assert_uint_ge(framesAccepted, kWireTimingBytes);
	ck_assert_uint_lt(framesAccepted, timed.size);
	ck_assert_uint_gt(linesAccepted, 40);
	ck_assert_uint_lt(linesAccepted, line.size);
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

int main()
{
	Suite *s = suite_create("wire_timing");
	TCase *tc = tcase_create("wire_timing");
	tcase_add_test(tc, a_timed_frame_is_a_frame_with_its_times_after_the_id);
	tcase_add_test(tc, the_timeline_round_trips_and_bad_ones_are_refused);
	tcase_add_test(tc, features_have_two_forms);
	tcase_add_test(tc, the_hello_offers_times_where_an_earlier_receiver_does_not_look);
	tcase_add_test(tc, every_truncation_of_the_new_messages_is_refused);
	tcase_add_test(tc, every_byte_of_the_new_messages_flipped);
	suite_add_tcase(s, tc);
	return runSuite(s);
}
