// VA-API backend object: open, allocate, map, DMA-BUF export/import and copies on a real render
// node; skips (77) with the reason where no render node or VA driver is usable.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/layout.h>

#include "backend_probe.h"
#include "fd_count.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <va/va.h>

// Last: Check defines a fail() macro that breaks standard headers included after it.
// clang-format off
#include "frame_pattern.h"
#include "check_helpers.h"
// clang-format on

using namespace gpuhandle;

namespace {

BackendRef openVaApi()
{
	Result<BackendRef> opened = openBackend(BackendKind::VaApi);
	ck_assert_ok(opened);
	return *opened;
}

AllocateRequest requestOf(PixelFormat format, uint32_t width, uint32_t height,
			  FrameStorage storage = FrameStorage::OptimalImage)
{
	AllocateRequest request;
	request.format = format;
	request.width = width;
	request.height = height;
	request.storage = storage;
	return request;
}

// The formats of the brief the driver takes, in the storage it takes them.
const PixelFormat kFormats[] = { PixelFormat::NV12, PixelFormat::P010LE, PixelFormat::RGBA,
				 PixelFormat::YUV420P };

template<typename T>
bool has(const std::vector<T> &list, T value)
{
	for (const T &item : list)
		if (item == value)
			return true;
	return false;
}

} // namespace

// Runs anywhere: without a render node or driver the open fails with NotSupported, leaking nothing.
START_TEST(open_answers_or_says_why)
{
	int fds = test::openFdCount();
	Result<BackendRef> opened = openBackend(BackendKind::VaApi);
	if (!opened.ok()) {
		ck_assert_int_eq(static_cast<int>(opened.error().code()),
				 static_cast<int>(ErrorCode::NotSupported));
		ck_assert(!opened.error().message().empty());
	}
	opened = Error(ErrorCode::Fatal, "", "dropped");
	ck_assert_int_eq(test::openFdCount(), fds);
	// A node that cannot exist names itself.
	BackendOpenOptions far;
	far.deviceIndex = 1000;
	Result<BackendRef> none = openBackend(BackendKind::VaApi, far);
	ck_assert_error(none, ErrorCode::NotSupported, "device");
	ck_assert(none.error().message().find("renderD1128") != std::string::npos);
	ck_assert_int_eq(test::openFdCount(), fds);
}
END_TEST

START_TEST(device_is_described)
{
	BackendRef va = openVaApi();
	const DeviceInfo &info = va->deviceInfo();
	ck_assert(info.backend == BackendKind::VaApi);
	ck_assert(!info.name.empty());
	ck_assert(info.id.drmRenderNode.has_value());
	ck_assert(va->context() && va->context()->backend() == BackendKind::VaApi);
	ck_assert(va->capabilities().cpuMap);
	ck_assert(!va->supportedFormats(FrameStorage::OptimalImage).empty());
	ck_assert(!va->supportsFormat(PixelFormat::NV12, FrameStorage::Buffer));
	std::printf("vaapi device: %s, gpu copy %s\n", info.toString().c_str(),
		    va->capabilities().gpuCopy ? "yes" : "no");
	// Only what can be made and told: linear surfaces need libva 1.12's modifier attribute,
	// and libva has no modifier query, so no modifier is listed (each export carries its own).
	const BackendCapabilities &caps = va->capabilities();
	ck_assert(has(caps.storages, FrameStorage::OptimalImage));
#if VA_CHECK_VERSION(1, 12, 0)
	ck_assert(has(caps.storages, FrameStorage::LinearImage));
#else
	ck_assert(!has(caps.storages, FrameStorage::LinearImage));
	ck_assert(va->supportedFormats(FrameStorage::LinearImage).empty());
#endif
	ck_assert(caps.drmModifiers.empty());
	// A second backend inside the first one's context shares its display.
	BackendOpenOptions options;
	options.context = va->context();
	Result<BackendRef> inside = openBackend(BackendKind::VaApi, options);
	ck_assert_ok(inside);
	Result<Frame> frame = va->allocate(requestOf(PixelFormat::NV12, 64, 32));
	ck_assert_ok(frame);
	Result<Frame> direct = (*inside)->importFrame(*frame, ImportRoute::Direct);
	ck_assert_ok(direct);
	ck_assert((*inside)->holds(*direct));
}
END_TEST

START_TEST(allocate_write_read_identical)
{
	BackendRef va = openVaApi();
	int fds = test::openFdCount();
	const uint32_t sizes[][2] = { { 33, 17 }, { 64, 64 } };
	uint32_t seed = 1;
	int ran = 0;
	for (FrameStorage storage : { FrameStorage::OptimalImage, FrameStorage::LinearImage })
		for (PixelFormat format : kFormats) {
			if (!va->supportsFormat(format, storage))
				continue;
			for (const auto &size : sizes) {
				Result<Frame> frame =
					va->allocate(requestOf(format, size[0], size[1], storage));
				if (!frame.ok() && storage == FrameStorage::LinearImage) {
					std::printf("no linear %s: %s\n", pixelFormatName(format),
						    frame.error().message().c_str());
					break;
				}
				ck_assert_ok(frame);
				ck_assert(va->holds(*frame));
				test::writePatternOk(*va, *frame, seed);
				test::checkPatternOk(*va, *frame, seed);
				++seed;
				++ran;
			}
		}
	ck_assert_int_gt(ran, 0);
	if (va->supportsFormat(PixelFormat::NV12, FrameStorage::OptimalImage)) {
		Result<Frame> large = va->allocate(requestOf(PixelFormat::NV12, 3840, 2160));
		ck_assert_ok(large);
		test::writePatternOk(*va, *large, 7);
		test::checkPatternOk(*va, *large, 7);
	}
	ck_assert_int_eq(test::openFdCount(), fds);
}
END_TEST

START_TEST(dmabuf_export_import_identical)
{
	BackendRef va = openVaApi();
	int fds = test::openFdCount();
	for (PixelFormat format : kFormats) {
		if (!va->supportsFormat(format, FrameStorage::OptimalImage))
			continue;
		Result<Frame> frame = va->allocate(requestOf(format, 33, 17));
		ck_assert_ok(frame);
		test::writePatternOk(*va, *frame, 4);
		Result<Frame> exported = va->exportFrame(*frame, ResourceKind::DmaBuf);
		ck_assert_ok(exported);
		ck_assert(exported->resource(0).kind() == ResourceKind::DmaBuf);
		std::printf("%s surface exports with modifier 0x%016llx\n", pixelFormatName(format),
			    static_cast<unsigned long long>(
				    exported->resource(0).get<DmaBuf>()->desc().modifier));
		Result<Frame> imported = va->importFrame(*exported, ImportRoute::DmaBuf);
		ck_assert_ok(imported);
		ck_assert(va->holds(*imported));
		test::checkPatternOk(*va, *imported, 4);
		// Writes through the import land in the first surface: the memory is shared.
		test::writePatternOk(*va, *imported, 5);
		test::checkPatternOk(*va, *frame, 5);
		// The import outlives the frame and the export it came from.
		frame = Error(ErrorCode::Fatal, "", "dropped");
		exported = Error(ErrorCode::Fatal, "", "dropped");
		test::checkPatternOk(*va, *imported, 5);
	}
	// A linear surface's export says so in its own modifier, and imports back.
	if (va->supportsFormat(PixelFormat::NV12, FrameStorage::LinearImage)) {
		Result<Frame> linear = va->allocate(
			requestOf(PixelFormat::NV12, 64, 32, FrameStorage::LinearImage));
		if (linear.ok()) {
			test::writePatternOk(*va, *linear, 6);
			Result<Frame> exported = va->exportFrame(*linear, ResourceKind::DmaBuf);
			ck_assert_ok(exported);
			ck_assert_uint_eq(exported->resource(0).get<DmaBuf>()->desc().modifier,
					  kDrmModifierLinear);
			Result<Frame> imported = va->importFrame(*exported, ImportRoute::DmaBuf);
			ck_assert_ok(imported);
			test::checkPatternOk(*va, *imported, 6);
		} else {
			std::printf("no linear NV12: %s\n", linear.error().message().c_str());
		}
	}
	ck_assert_int_eq(test::openFdCount(), fds);
}
END_TEST

START_TEST(copy_frame_or_says_why)
{
	BackendRef va = openVaApi();
	Result<Frame> src = va->allocate(requestOf(PixelFormat::NV12, 33, 17));
	Result<Frame> dst = va->allocate(requestOf(PixelFormat::NV12, 33, 17));
	ck_assert_ok(src);
	ck_assert_ok(dst);
	test::writePatternOk(*va, *src, 8);
	if (!va->capabilities().gpuCopy) {
		ck_assert_error(va->copyFrame(*dst, *src, kDefaultWaitTimeout),
				ErrorCode::NotSupported, "copy");
		return;
	}
	ck_assert_ok(va->copyFrame(*dst, *src, kDefaultWaitTimeout));
	test::checkPatternOk(*va, *dst, 8);
	Result<Frame> other = va->allocate(requestOf(PixelFormat::NV12, 64, 64));
	ck_assert_ok(other);
	ck_assert_error(va->copyFrame(*other, *src, kDefaultWaitTimeout), ErrorCode::FormatMismatch,
			"dst");
}
END_TEST

START_TEST(bad_input_is_refused)
{
	BackendRef va = openVaApi();
	int fds = test::openFdCount();
	ck_assert_error(va->allocate(requestOf(PixelFormat::NV12, 0, 17)), ErrorCode::ZeroSize,
			"width");
	ck_assert_error(va->allocate(requestOf(PixelFormat::NV12, 33, 17, FrameStorage::Buffer)),
			ErrorCode::NotSupported, "storage");
	ck_assert_error(va->allocate(requestOf(PixelFormat::RGBAF32, 33, 17)),
			ErrorCode::NotSupported, "format");

	// A frame of CPU memory is not the backend's.
	Result<FrameLayout> layout = computeLayout(PixelFormat::NV12, 33, 17);
	ck_assert_ok(layout);
	std::vector<uint8_t> bytes(layout->size);
	Result<CpuBytes> cpu = CpuBytes::create({ bytes.data(), bytes.size(), {} });
	ck_assert_ok(cpu);
	FrameDesc desc;
	desc.format = PixelFormat::NV12;
	desc.width = 33;
	desc.height = 17;
	desc.numResources = 1;
	desc.resources[0] = Resource(*cpu);
	desc.numPlanes = 2;
	for (uint32_t p = 0; p < 2; ++p)
		desc.planes[p] =
			PlaneView{ 0, 0, layout->planes[p].offset, layout->planes[p].stride };
	Result<Frame> host = Frame::create(desc);
	ck_assert_ok(host);
	ck_assert(!va->holds(*host));
	ck_assert_error(va->map(*host, MapAccess::Read, kDefaultWaitTimeout), ErrorCode::WrongKind,
			"frame");
	ck_assert_error(va->exportFrame(*host, ResourceKind::DmaBuf), ErrorCode::WrongKind,
			"frame");
	Result<Frame> frame = va->allocate(requestOf(PixelFormat::NV12, 33, 17));
	ck_assert_ok(frame);
	ck_assert_error(va->copyFrame(*frame, *host, kDefaultWaitTimeout), ErrorCode::WrongKind,
			"frame");
	ck_assert_error(va->exportFrame(*frame, ResourceKind::ShmFd), ErrorCode::NotSupported,
			"kind");
	ck_assert_error(va->importFrame(*host, ImportRoute::HostPointer), ErrorCode::NotSupported,
			"route");
	ck_assert_error(va->importFrame(*host, ImportRoute::OpaqueFd), ErrorCode::NotSupported,
			"route");
	ck_assert_error(va->importFrame(*host, ImportRoute::DmaBuf), ErrorCode::NotSupported,
			"route");
	ck_assert_error(va->importFrame(*host, ImportRoute::Direct), ErrorCode::NotSupported,
			"route");
	ck_assert_error(va->importFrame(*host, ImportRoute::CpuCopy), ErrorCode::NotSupported,
			"route");

	// A DMA-BUF the driver cannot take (a memfd with a made-up modifier) fails cleanly.
	DmaBufDesc fake;
	fake.fourcc = 0x3231564e; // DRM_FORMAT_NV12
	fake.modifier = 0x00ffffffffff0001ULL;
	fake.width = 33;
	fake.height = 17;
	fake.numObjects = 1;
	fake.objects[0].fd = SharedFd(test::makeMemfd(layout->size));
	fake.objects[0].size = layout->size;
	fake.numPlanes = 2;
	for (uint32_t p = 0; p < 2; ++p)
		fake.planes[p] =
			DmaBufPlane{ 0, layout->planes[p].offset, layout->planes[p].stride };
	Result<DmaBuf> dmabuf = DmaBuf::create(std::move(fake));
	ck_assert_ok(dmabuf);
	Result<Frame> odd =
		Frame::wrap(PixelFormat::NV12, 33, 17, Colorimetry{}, Resource(*dmabuf));
	ck_assert_ok(odd);
	Result<Frame> refused = va->importFrame(*odd, ImportRoute::DmaBuf);
	ck_assert(!refused.ok());
	std::printf("made-up modifier: %s\n", refused.error().message().c_str());
	dmabuf = Error(ErrorCode::Fatal, "", "dropped");
	odd = Error(ErrorCode::Fatal, "", "dropped");
	ck_assert_int_eq(test::openFdCount(), fds);
}
END_TEST

namespace {

Suite *hardwareSuite()
{
	Suite *suite = suite_create("vaapi_backend");
	TCase *tc = tcase_create("device");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, device_is_described);
	tcase_add_test(tc, allocate_write_read_identical);
	tcase_add_test(tc, dmabuf_export_import_identical);
	tcase_add_test(tc, copy_frame_or_says_why);
	tcase_add_test(tc, bad_input_is_refused);
	suite_add_tcase(suite, tc);
	return suite;
}

Suite *anywhereSuite()
{
	Suite *suite = suite_create("vaapi_backend_anywhere");
	TCase *tc = tcase_create("open");
	tcase_add_test(tc, open_answers_or_says_why);
	suite_add_tcase(suite, tc);
	return suite;
}

} // namespace

int main()
{
	if (test::runSuite(anywhereSuite()) != EXIT_SUCCESS)
		return EXIT_FAILURE;
	// The probe runs in a child, so that this process opens no driver before Check forks.
	int probe = test::probeBackend(BackendKind::VaApi);
	if (probe != 0)
		return probe;
	return test::runSuite(hardwareSuite());
}
