// Every format-table function over every 16-bit value and a million random 32-bit values (a
// hundred thousand under sanitizers and valgrind): no crash, and every answer is either a
// consistent value or an error.
#include <gpuhandle/colorimetry_mappings.h>
#include <gpuhandle/format_mappings.h>
#include <gpuhandle/layout.h>

#include <cstdio>
#include <random>

#include "check_helpers.h"

using namespace gpuhandle;

namespace {

// Calls every table function with `value` (and values derived from it); asserts consistency.
void probe(uint32_t value, uint32_t other)
{
	for (uint32_t a = 0; a <= kFormatApiCount; ++a) { // one past the end: an unknown API
		auto api = static_cast<FormatApi>(a);
		auto from = fromApiFormat(api, value);
		if (from.ok()) {
			ck_assert(pixelFormatInfo(*from).ok());
			auto back = toApiFormat(api, *from);
			ck_assert(back.ok());
		} else {
			ck_assert(from.error().code() == ErrorCode::NotSupported ||
				  from.error().code() == ErrorCode::InvalidArgument);
		}
		auto to = toApiFormat(api, static_cast<PixelFormat>(value));
		if (to.ok())
			ck_assert(canRepresent(api, static_cast<PixelFormat>(value)));
	}
	for (uint32_t a = 0; a <= kPlaneApiCount; ++a) {
		auto api = static_cast<PlaneApi>(a);
		auto from = fromPlaneApiFormat(api, value, other);
		if (from.ok())
			ck_assert(toPlaneApiFormat(api, *from).ok());
		(void)toPlaneApiFormat(api, static_cast<PlaneFormat>(value & 0xff));
		(void)planeApiFormats(api, static_cast<PixelFormat>(value));
	}
	auto format = static_cast<PixelFormat>(value);
	(void)pixelFormatName(format);
	(void)vaRtFormat(format);
	auto info = pixelFormatInfo(format);
	ck_assert(info.ok() == (value >= 1 && value < kPixelFormatCount));
	// Layouts: small formats with random sizes and policies, including zero and huge sizes.
	auto policy = static_cast<LayoutPolicy>(other % 5);
	auto layout = computeLayout(static_cast<PixelFormat>(value % (kPixelFormatCount + 2)),
				    other & 0xffff, (other >> 16) | (value & 1), policy,
				    1u << (value % 14));
	if (layout.ok())
		ck_assert_uint_ge(layout->size, layout->planes[0].stride);
	(void)estimateTextureBytes(format, other, value, other >> 24, value >> 28);

	Colorimetry c;
	c.range = static_cast<ColorRange>(value & 0xff);
	c.matrix = static_cast<ColorMatrix>((value >> 8) & 0xff);
	c.primaries = static_cast<ColorPrimaries>((value >> 16) & 0xff);
	c.transfer = static_cast<ColorTransfer>(value >> 24);
	auto gst = toGstColorimetry(c);
	auto av = toAvColor(c);
	(void)toVkYcbcr(c);
	if (av.ok())
		ck_assert(fromAvColor(*av).ok());
	if (gst.ok())
		ck_assert(fromGstColorimetry(*gst).ok());
	(void)fromGstColorimetry({ value & 0xff, value >> 8 & 0xff, value >> 16 & 0xff, other });
	(void)fromAvColor({ value, other, value >> 3, other >> 5 });
}

} // namespace

START_TEST(every_16_bit_value)
{
	for (uint32_t value = 0; value <= 0xffff; ++value)
		probe(value, value * 2654435761u);
	ck_assert(true);
}
END_TEST

START_TEST(a_million_random_32_bit_values)
{
	std::mt19937 random(20261129); // fixed seed: a failure is reproducible
	const long count = gpuhandle::test::scaledCount(1000000);
	for (long i = 0; i < count; ++i) {
		uint32_t value = static_cast<uint32_t>(random());
		probe(value, static_cast<uint32_t>(random()));
	}
	printf("format fuzz: %ld random values probed\n", count);
	ck_assert(true);
}
END_TEST

int main()
{
	Suite *s = suite_create("format-fuzz");
	TCase *tc = tcase_create("fuzz");
	tcase_set_timeout(tc, 110);
	tcase_add_test(tc, every_16_bit_value);
	tcase_add_test(tc, a_million_random_32_bit_values);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
