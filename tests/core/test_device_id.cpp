// Tests of DeviceId matching across APIs, PCI bus id parsing, DRM nodes and DeviceInfo.
#include <gpuhandle/device_id.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::test;

namespace {

PciBusId pci(const char *text)
{
	auto result = PciBusId::parse(text);
	ck_assert_msg(result.ok(), "%s", result.ok() ? "" : result.error().message().c_str());
	return *result;
}

DeviceId withUuid(uint8_t seed)
{
	DeviceId id;
	id.uuid = uuidOf(seed);
	return id;
}

DeviceId withPci(const char *text)
{
	DeviceId id;
	id.pciBusId = pci(text);
	return id;
}

void expectMatch(const DeviceId &a, const DeviceId &b, DeviceMatch expected)
{
	DeviceMatch ab = sameDevice(a, b);
	DeviceMatch ba = sameDevice(b, a);
	ck_assert_msg(ab == expected, "sameDevice(%s, %s) is %s, expected %s", a.toString().c_str(),
		      b.toString().c_str(), deviceMatchName(ab), deviceMatchName(expected));
	ck_assert_msg(ba == ab, "sameDevice is not symmetric for %s and %s", a.toString().c_str(),
		      b.toString().c_str());
}

} // namespace

START_TEST(pci_parse_round_trip)
{
	const char *canonical[] = { "0000:01:00.0", "0000:3b:1f.7", "0001:ff:00.3",
				    "10000:e1:00.1" };
	for (const char *text : canonical) {
		auto id = PciBusId::parse(text);
		ck_assert_msg(id.ok(), "%s was refused", text);
		ck_assert_string_eq(id->toString(), text);
	}
	PciBusId id = pci("0000:3b:1f.7");
	ck_assert_uint_eq(id.domain(), 0);
	ck_assert_uint_eq(id.bus(), 0x3b);
	ck_assert_uint_eq(id.device(), 0x1f);
	ck_assert_uint_eq(id.function(), 7);

	// Other spellings normalise to the sysfs one.
	ck_assert_string_eq(pci("00000000:01:00.0").toString(), "0000:01:00.0"); // nvidia-smi
	ck_assert_string_eq(pci("01:00.0").toString(), "0000:01:00.0");          // lspci
	ck_assert_string_eq(pci("0000:0A:1F.1").toString(), "0000:0a:1f.1");
	ck_assert(pci("00000000:01:00.0") == pci("0000:01:00.0"));
	ck_assert(!(pci("0000:01:00.0") == pci("0000:01:00.1")));
}
END_TEST

START_TEST(pci_parse_rejects)
{
	const char *malformed[] = { "0000:01:00",    "zzzz:01:00.0",      "",
				    "0000:001:00.0", "000000000:01:00.0", "0000:01:00.0 ",
				    "0000:01:00.00", "0000::00.0",        ":01:00.0",
				    "0000:01:00.",   "0000:01.00.0",      "1:2:3:4.0",
				    "0000:01:0g.0" };
	for (const char *text : malformed) {
		auto id = PciBusId::parse(text);
		ck_assert_msg(!id.ok(), "\"%s\" was accepted", text);
		ck_assert_error(id, ErrorCode::InvalidArgument, "pciBusId");
		ck_assert_msg(std::strstr(id.error().message().c_str(), text),
			      "message lacks the text: %s", id.error().message().c_str());
	}
	auto function = PciBusId::parse("0000:01:00.8");
	ck_assert_error(function, ErrorCode::OutOfRange, "function");
	ck_assert_ptr_nonnull(std::strstr(function.error().message().c_str(), "8"));
	auto device = PciBusId::parse("0000:01:20.0");
	ck_assert_error(device, ErrorCode::OutOfRange, "device");
	ck_assert_ptr_nonnull(std::strstr(device.error().message().c_str(), "32"));
}
END_TEST

START_TEST(pci_create)
{
	auto id = PciBusId::create(2, 255, 31, 7);
	ck_assert(id.ok());
	ck_assert_string_eq(id->toString(), "0002:ff:1f.7");
	ck_assert_error(PciBusId::create(0, 256, 0, 0), ErrorCode::OutOfRange, "bus");
	ck_assert_error(PciBusId::create(0, 1, 32, 0), ErrorCode::OutOfRange, "device");
	ck_assert_error(PciBusId::create(0, 1, 0, 8), ErrorCode::OutOfRange, "function");
}
END_TEST

START_TEST(match_uuid_across_apis)
{
	// A Vulkan deviceUUID and a CUDA CUuuid of one GPU are the same 16 bytes.
	DeviceId vulkan = withUuid(0x10);
	vulkan.pciBusId = pci("0000:01:00.0");
	DeviceId cuda = withUuid(0x10);
	expectMatch(vulkan, cuda, DeviceMatch::Same);
	expectMatch(vulkan, withUuid(0x20), DeviceMatch::Different);
	ck_assert(sameDevice(vulkan, cuda) == DeviceMatch::Same);
}
END_TEST

START_TEST(match_strongest_identity_decides)
{
	DeviceId a = withUuid(1);
	a.pciBusId = pci("0000:01:00.0");
	DeviceId b = withUuid(2);
	b.pciBusId = pci("0000:01:00.0");
	// Two driver stacks naming one card differently: UUID-keyed imports would fail, so
	// Different.
	expectMatch(a, b, DeviceMatch::Different);
	ck_assert(sameDevice(a, b) == DeviceMatch::Different);

	b.uuid = uuidOf(1);
	b.pciBusId = pci("0000:02:00.0");
	expectMatch(a, b, DeviceMatch::Same); // weaker identities are not consulted

	b.uuid.reset(); // now only the PCI bus id is shared
	expectMatch(a, b, DeviceMatch::Different);
	b.pciBusId = pci("0000:01:00.0");
	expectMatch(a, b, DeviceMatch::Same);
}
END_TEST

START_TEST(match_each_identity_kind)
{
	DeviceId a, b;
	a.luid = Luid{ 0x1234, 0 };
	b.luid = Luid{ 0x1234, 0 };
	expectMatch(a, b, DeviceMatch::Same);
	ck_assert(sameDevice(a, b) == DeviceMatch::Same);
	b.luid = Luid{ 0x1234, 1 };
	expectMatch(a, b, DeviceMatch::Different);

	expectMatch(withPci("0000:01:00.0"), withPci("0000:01:00.0"), DeviceMatch::Same);
	expectMatch(withPci("0000:01:00.0"), withPci("0000:01:00.1"), DeviceMatch::Different);

	DeviceId render1, render2, primary;
	render1.drmRenderNode = DrmNode{ 226, 128 };
	render2.drmRenderNode = DrmNode{ 226, 129 };
	primary.drmPrimaryNode = DrmNode{ 226, 0 };
	expectMatch(render1, render1, DeviceMatch::Same);
	expectMatch(render1, render2, DeviceMatch::Different);
	// A render and a primary node never compare.
	expectMatch(render1, primary, DeviceMatch::Unknown);
	expectMatch(primary, primary, DeviceMatch::Same);

	DeviceId metal1, metal2;
	metal1.metalRegistryId = 0x100000001;
	metal2.metalRegistryId = 0x100000002;
	expectMatch(metal1, metal1, DeviceMatch::Same);
	expectMatch(metal1, metal2, DeviceMatch::Different);
}
END_TEST

START_TEST(match_unknown_without_shared_kind)
{
	DeviceId luid;
	luid.luid = Luid{ 7, 0 };
	expectMatch(withUuid(1), luid, DeviceMatch::Unknown);
	expectMatch(DeviceId{}, DeviceId{}, DeviceMatch::Unknown);
	expectMatch(withUuid(1), DeviceId{}, DeviceMatch::Unknown);

	// Null identities are ignored: an all-zero UUID on both sides proves nothing.
	DeviceId zero1, zero2;
	zero1.uuid = Uuid{};
	zero2.uuid = Uuid{};
	expectMatch(zero1, zero2, DeviceMatch::Unknown);
	zero1.pciBusId = pci("0000:01:00.0");
	zero2.pciBusId = pci("0000:02:00.0");
	expectMatch(zero1, zero2, DeviceMatch::Different);
	DeviceId zeroNode, zeroLuid, zeroRegistry;
	zeroNode.drmRenderNode = DrmNode{};
	zeroLuid.luid = Luid{};
	zeroRegistry.metalRegistryId = 0;
	ck_assert(zeroNode.isEmpty() && zeroLuid.isEmpty() && zeroRegistry.isEmpty());
	expectMatch(zeroNode, zeroNode, DeviceMatch::Unknown);
}
END_TEST

START_TEST(match_cpu)
{
	expectMatch(DeviceId::cpu(), DeviceId::cpu(), DeviceMatch::Same);
	expectMatch(DeviceId::cpu(), withUuid(3), DeviceMatch::Different);
	expectMatch(DeviceId::cpu(), withPci("0000:01:00.0"), DeviceMatch::Different);
	expectMatch(DeviceId::cpu(), DeviceId{}, DeviceMatch::Unknown);
	// isCpu wins over any stray identity.
	DeviceId cpuWithUuid = DeviceId::cpu();
	cpuWithUuid.uuid = uuidOf(3);
	expectMatch(cpuWithUuid, withUuid(3), DeviceMatch::Different);
	ck_assert(!DeviceId::cpu().isEmpty());
	ck_assert(DeviceId{}.isEmpty());
}
END_TEST

START_TEST(equality_and_hash)
{
	DeviceId a = withUuid(5);
	a.pciBusId = pci("0000:01:00.0");
	a.drmRenderNode = DrmNode{ 226, 128 };
	DeviceId b = a;
	ck_assert(a == b);
	ck_assert_uint_eq(a.hash(), b.hash());
	b.drmRenderNode = DrmNode{ 226, 129 };
	ck_assert(!(a == b));
	std::unordered_set<DeviceId> set{ a, b, a, DeviceId::cpu(), DeviceId{} };
	ck_assert_uint_eq(set.size(), 4);
	ck_assert(!(DeviceId::cpu() == DeviceId{}));
}
END_TEST

START_TEST(to_string)
{
	ck_assert_string_eq(formatUuid(uuidOf(0)), "00010203-0405-0607-0809-0a0b0c0d0e0f");
	ck_assert_string_eq(DeviceId::cpu().toString(), "cpu");
	ck_assert_string_eq(DeviceId{}.toString(), "unknown");
	DeviceId id = withUuid(0);
	id.luid = Luid{ 0xabcd, 1 };
	id.pciBusId = pci("0000:01:00.0");
	id.drmRenderNode = DrmNode{ 226, 128 };
	id.drmPrimaryNode = DrmNode{ 226, 0 };
	id.metalRegistryId = 0x1f;
	ck_assert_string_eq(
		id.toString(),
		"uuid=00010203-0405-0607-0809-0a0b0c0d0e0f luid=00000001:0000abcd pci=0000:01:00.0 "
		"render=226:128 primary=226:0 registry=0x1f");
	ck_assert_str_eq(deviceMatchName(DeviceMatch::Same), "same");
	ck_assert_str_eq(deviceMatchName(DeviceMatch::Different), "different");
	ck_assert_str_eq(deviceMatchName(DeviceMatch::Unknown), "unknown");
}
END_TEST

START_TEST(drm_node_from_path)
{
	// /dev/null is character device 1:3 on every Linux system.
	auto null = DrmNode::fromPath("/dev/null");
	ck_assert(null.ok());
	ck_assert_uint_eq(null->major, 1);
	ck_assert_uint_eq(null->minor, 3);
	ck_assert_string_eq(null->toString(), "1:3");
	ck_assert_error(DrmNode::fromPath("/nonexistent/renderD128"), ErrorCode::Io, "path");
	ck_assert_error(DrmNode::fromPath("/"), ErrorCode::InvalidArgument, "path");
	ck_assert_error(DrmNode::fromPath(nullptr), ErrorCode::NullHandle, "path");
}
END_TEST

START_TEST(device_info)
{
	ck_assert(isSoftwareRendererName("llvmpipe (LLVM 15.0.6, 256 bits)"));
	ck_assert(isSoftwareRendererName("LAVAPIPE"));
	ck_assert(isSoftwareRendererName("Microsoft Basic Render Driver"));
	ck_assert(isSoftwareRendererName("SwiftShader Device (Subzero)"));
	ck_assert(!isSoftwareRendererName("NVIDIA GeForce RTX 4090"));
	ck_assert(!isSoftwareRendererName("AMD Radeon RX 7600 (RADV NAVI33)"));
	ck_assert(!isSoftwareRendererName(""));

	DeviceInfo info;
	info.backend = BackendKind::Vulkan;
	info.name = "llvmpipe (LLVM 15.0.6, 256 bits)";
	info.id = withUuid(0);
	info.vendorId = 0x10005;
	info.driverVersion = "Mesa 22.3.6";
	info.isSoftware = isSoftwareRendererName(info.name);
	ck_assert_string_eq(info.toString(),
			    "vulkan: llvmpipe (LLVM 15.0.6, 256 bits) [software] vendor=0x10005 "
			    "id=[uuid=00010203-0405-0607-0809-0a0b0c0d0e0f] driver Mesa 22.3.6");
	DeviceInfo gpu;
	gpu.backend = BackendKind::Cuda;
	gpu.name = "NVIDIA H200";
	gpu.vendorId = 0x10de;
	gpu.pciDeviceId = 0x2335;
	gpu.dedicatedMemoryBytes = uint64_t{ 141 } << 30;
	ck_assert_string_eq(
		gpu.toString(),
		"cuda: NVIDIA H200 vendor=0x10de device=0x2335 memory=144384MiB id=[unknown]");
}
END_TEST

int main()
{
	Suite *suite = suite_create("device_id");
	TCase *pciCase = tcase_create("pci");
	tcase_add_test(pciCase, pci_parse_round_trip);
	tcase_add_test(pciCase, pci_parse_rejects);
	tcase_add_test(pciCase, pci_create);
	suite_add_tcase(suite, pciCase);

	TCase *matchCase = tcase_create("match");
	tcase_add_test(matchCase, match_uuid_across_apis);
	tcase_add_test(matchCase, match_strongest_identity_decides);
	tcase_add_test(matchCase, match_each_identity_kind);
	tcase_add_test(matchCase, match_unknown_without_shared_kind);
	tcase_add_test(matchCase, match_cpu);
	tcase_add_test(matchCase, equality_and_hash);
	suite_add_tcase(suite, matchCase);

	TCase *miscCase = tcase_create("misc");
	tcase_add_test(miscCase, to_string);
	tcase_add_test(miscCase, drm_node_from_path);
	tcase_add_test(miscCase, device_info);
	suite_add_tcase(suite, miscCase);

	return gpuhandle::test::runSuite(suite);
}
