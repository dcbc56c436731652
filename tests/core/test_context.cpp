// Tests of Context: every factory's accepted and refused inputs, accessors, identity, anchors.
#include <gpuhandle/context.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::test;

static_assert(!std::is_copy_constructible_v<Context>);
static_assert(!std::is_copy_assignable_v<Context>);

namespace {

// Creates a context from `native` changed by `edit`; it must be refused with `code` on `field`.
template<typename Native, typename Edit>
void refuse(Native native, ErrorCode code, const char *field, Edit edit)
{
	edit(native);
	auto result = Context::create(std::move(native));
	ck_assert_msg(!result.ok(), "a context with a bad %s was accepted", field);
	ck_assert_error(result, code, field);
	ck_assert(!result.error().message().empty());
}

VulkanContext validVulkan()
{
	VulkanContext c;
	c.instance = fakeHandle(0x10);
	c.physicalDevice = fakeHandle(0x20);
	c.device = fakeHandle(0x30);
	c.queue = fakeHandle(0x40);
	c.queueFamilyIndex = 2;
	c.enabledDeviceExtensions = { "VK_KHR_external_memory_fd", "VK_KHR_external_semaphore_fd" };
	c.deviceUuid = uuidOf(1);
	c.renderNode = DrmNode{ 226, 128 };
	return c;
}

GlContext validGl()
{
	GlContext c;
	c.display = fakeHandle(0x50);
	c.context = fakeHandle(0x60);
	c.flavour = GlFlavour::Egl;
	return c;
}

CudaContext validCuda()
{
	CudaContext c;
	c.context = fakeHandle(0x70);
	c.ordinal = 0;
	c.uuid = uuidOf(1);
	return c;
}

OpenClContext validOpenCl()
{
	OpenClContext c;
	c.context = fakeHandle(0x80);
	c.queue = fakeHandle(0x90);
	c.device = fakeHandle(0xa0);
	return c;
}

VaApiContext validVaApi()
{
	VaApiContext c;
	c.display = fakeHandle(0xb0);
	c.renderNode = DrmNode{ 226, 128 };
	return c;
}

D3D11Context validD3D11()
{
	D3D11Context c;
	c.device = fakeHandle(0xc0);
	c.deviceContext = fakeHandle(0xd0);
	c.luid = Luid{ 0x1234, 0 };
	return c;
}

D3D12Context validD3D12()
{
	D3D12Context c;
	c.device = fakeHandle(0xe0);
	c.queue = fakeHandle(0xf0);
	c.luid = Luid{ 0x1234, 0 };
	return c;
}

MetalContext validMetal()
{
	MetalContext c;
	c.device = fakeHandle(0x100);
	c.queue = fakeHandle(0x110);
	c.registryId = 0x100000a2c;
	return c;
}

WebGpuContext validWebGpu()
{
	WebGpuContext c;
	c.device = fakeHandle(0x120);
	c.queue = fakeHandle(0x130);
	return c;
}

// Whether the accessor named after `kind` succeeds on `context`; a failure must be WrongKind.
bool accessorOk(const Context &context, BackendKind kind)
{
	auto check = [](const auto &result) {
		if (!result.ok()) {
			ck_assert_int_eq(static_cast<int>(result.error().code()),
					 static_cast<int>(ErrorCode::WrongKind));
			ck_assert_str_eq(result.error().field(), "backend");
			ck_assert(!result.error().message().empty());
		}
		return result.ok();
	};
	switch (kind) {
	case BackendKind::Vulkan: return check(context.vulkan());
	case BackendKind::OpenGL: return check(context.opengl());
	case BackendKind::Cuda: return check(context.cuda());
	case BackendKind::OpenCl: return check(context.opencl());
	case BackendKind::VaApi: return check(context.vaapi());
	case BackendKind::D3D11: return check(context.d3d11());
	case BackendKind::D3D12: return check(context.d3d12());
	case BackendKind::Metal: return check(context.metal());
	case BackendKind::WebGpu: return check(context.webgpu());
	default: return false;
	}
}

int destroyed = 0;
void countDestroy(void *)
{
	destroyed++;
}

} // namespace

START_TEST(cpu_context)
{
	auto cpu = Context::cpu();
	ck_assert_ptr_nonnull(cpu.get());
	ck_assert_int_eq(static_cast<int>(cpu->backend()), static_cast<int>(BackendKind::Cpu));
	ck_assert(cpu->deviceId() == DeviceId::cpu());
	auto vulkan = cpu->vulkan();
	ck_assert_error(vulkan, ErrorCode::WrongKind, "backend");
	ck_assert_string_eq(vulkan.error().message(),
			    "The context is a cpu context; vulkan() needs a vulkan context.");
}
END_TEST

START_TEST(vulkan_valid)
{
	auto context = Context::create(validVulkan());
	ck_assert(context.ok());
	const auto &ctx = *context;
	ck_assert_int_eq(static_cast<int>(ctx->backend()), static_cast<int>(BackendKind::Vulkan));
	auto vk = ctx->vulkan();
	ck_assert(vk.ok());
	ck_assert_ptr_eq((*vk)->device, fakeHandle(0x30));
	ck_assert_ptr_eq((*vk)->queue, fakeHandle(0x40));
	ck_assert_uint_eq((*vk)->queueFamilyIndex, 2);
	ck_assert_uint_eq((*vk)->enabledDeviceExtensions.size(), 2);
	ck_assert_ptr_null((*vk)->getInstanceProcAddr);
	DeviceId id = ctx->deviceId();
	ck_assert(id.uuid == uuidOf(1));
	ck_assert(id.drmRenderNode == (DrmNode{ 226, 128 }));
	ck_assert(!id.isCpu);

	// Identities are optional: none at all is fine.
	VulkanContext bare = validVulkan();
	bare.deviceUuid.reset();
	bare.renderNode.reset();
	bare.enabledDeviceExtensions.clear();
	auto bareContext = Context::create(bare);
	ck_assert(bareContext.ok());
	ck_assert((*bareContext)->deviceId().isEmpty());
}
END_TEST

START_TEST(vulkan_invalid)
{
	const VulkanContext v = validVulkan();
	refuse(v, ErrorCode::NullHandle, "instance", [](auto &c) { c.instance = nullptr; });
	refuse(v, ErrorCode::NullHandle, "physicalDevice",
	       [](auto &c) { c.physicalDevice = nullptr; });
	refuse(v, ErrorCode::NullHandle, "device", [](auto &c) { c.device = nullptr; });
	refuse(v, ErrorCode::NullHandle, "queue", [](auto &c) { c.queue = nullptr; });
	// VK_QUEUE_FAMILY_IGNORED, _EXTERNAL and _FOREIGN_EXT are markers, not families.
	for (uint32_t marker : { 0xffffffffu, 0xfffffffeu, 0xfffffffdu }) {
		VulkanContext c = validVulkan();
		c.queueFamilyIndex = marker;
		auto result = Context::create(c);
		ck_assert_error(result, ErrorCode::OutOfRange, "queueFamilyIndex");
		ck_assert_ptr_nonnull(
			std::strstr(result.error().message().c_str(), "VulkanContext"));
		ck_assert_ptr_nonnull(std::strstr(result.error().message().c_str(), "0xfffffff"));
	}
	refuse(v, ErrorCode::InvalidArgument, "enabledDeviceExtensions[1]",
	       [](auto &c) { c.enabledDeviceExtensions[1] = ""; });
	refuse(v, ErrorCode::InvalidArgument, "enabledInstanceExtensions[0]",
	       [](auto &c) { c.enabledInstanceExtensions = { "" }; });
	refuse(v, ErrorCode::InvalidArgument, "deviceUuid", [](auto &c) { c.deviceUuid = Uuid{}; });
	refuse(v, ErrorCode::InvalidArgument, "driverUuid", [](auto &c) { c.driverUuid = Uuid{}; });
	refuse(v, ErrorCode::InvalidArgument, "deviceLuid", [](auto &c) { c.deviceLuid = Luid{}; });
	refuse(v, ErrorCode::InvalidArgument, "renderNode",
	       [](auto &c) { c.renderNode = DrmNode{}; });
}
END_TEST

START_TEST(gl_valid_and_invalid)
{
	GlContext gl = validGl();
	gl.shareGroup = 0x60;
	gl.deviceUuid = uuidOf(1);
	auto context = Context::create(gl);
	ck_assert(context.ok());
	ck_assert_int_eq(static_cast<int>((*context)->backend()),
			 static_cast<int>(BackendKind::OpenGL));
	ck_assert(*(*(*context)->opengl())->shareGroup == 0x60);
	ck_assert((*context)->deviceId().uuid == uuidOf(1));
	GlContext cgl = validGl(); // CGL has no display
	cgl.flavour = GlFlavour::Cgl;
	cgl.display = nullptr;
	ck_assert(Context::create(cgl).ok());

	for (GlFlavour flavour : { GlFlavour::Egl, GlFlavour::Glx, GlFlavour::Wgl }) {
		gl.flavour = flavour;
		refuse(gl, ErrorCode::NullHandle, "display", [](auto &c) { c.display = nullptr; });
	}
	refuse(gl, ErrorCode::NullHandle, "context", [](auto &c) { c.context = nullptr; });
	refuse(gl, ErrorCode::InvalidArgument, "deviceUuid",
	       [](auto &c) { c.deviceUuid = Uuid{}; });
	refuse(gl, ErrorCode::InvalidArgument, "renderNode",
	       [](auto &c) { c.renderNode = DrmNode{}; });
	gl.flavour = static_cast<GlFlavour>(9);
	auto badFlavour = Context::create(gl);
	ck_assert_error(badFlavour, ErrorCode::InvalidArgument, "flavour");
	ck_assert_ptr_nonnull(std::strstr(badFlavour.error().message().c_str(), "9"));
}
END_TEST

START_TEST(cuda_valid_and_invalid)
{
	CudaContext cuda = validCuda();
	cuda.stream = nullptr; // the legacy default stream is legal
	cuda.ordinal = 3;
	auto context = Context::create(cuda);
	ck_assert(context.ok());
	ck_assert_int_eq((*(*context)->cuda())->ordinal, 3);
	ck_assert_ptr_null((*(*context)->cuda())->stream);

	cuda.ordinal = -1;
	auto negative = Context::create(cuda);
	ck_assert_error(negative, ErrorCode::OutOfRange, "ordinal");
	ck_assert_ptr_nonnull(std::strstr(negative.error().message().c_str(), "-1"));
	refuse(validCuda(), ErrorCode::NullHandle, "context", [](auto &c) { c.context = nullptr; });
	refuse(validCuda(), ErrorCode::InvalidArgument, "uuid", [](auto &c) { c.uuid = Uuid{}; });
}
END_TEST

START_TEST(opencl_valid_and_invalid)
{
	ck_assert(Context::create(validOpenCl()).ok());
	OpenClContext shared = validOpenCl();
	shared.glSharing = OpenClGlSharing{ fakeHandle(0x60), fakeHandle(0x50), GlFlavour::Egl };
	auto context = Context::create(shared);
	ck_assert(context.ok());
	ck_assert_ptr_eq((*(*context)->opencl())->glSharing->glContext, fakeHandle(0x60));
	shared.glSharing = OpenClGlSharing{ fakeHandle(0x60), nullptr, GlFlavour::Cgl };
	ck_assert(Context::create(shared).ok());

	const OpenClContext v = validOpenCl();
	refuse(v, ErrorCode::NullHandle, "context", [](auto &c) { c.context = nullptr; });
	refuse(v, ErrorCode::NullHandle, "queue", [](auto &c) { c.queue = nullptr; });
	refuse(v, ErrorCode::NullHandle, "device", [](auto &c) { c.device = nullptr; });
	refuse(v, ErrorCode::InvalidArgument, "deviceUuid", [](auto &c) { c.deviceUuid = Uuid{}; });
	shared.glSharing = OpenClGlSharing{ nullptr, fakeHandle(1), GlFlavour::Egl };
	ck_assert_error(Context::create(shared), ErrorCode::NullHandle, "glSharing.glContext");
	shared.glSharing = OpenClGlSharing{ fakeHandle(1), nullptr, GlFlavour::Glx };
	ck_assert_error(Context::create(shared), ErrorCode::NullHandle, "glSharing.glDisplay");
	shared.glSharing =
		OpenClGlSharing{ fakeHandle(1), fakeHandle(1), static_cast<GlFlavour>(4) };
	ck_assert_error(Context::create(shared), ErrorCode::InvalidArgument, "glSharing.flavour");
}
END_TEST

START_TEST(vaapi_valid_and_invalid)
{
	auto context = Context::create(validVaApi());
	ck_assert(context.ok());
	ck_assert((*context)->deviceId().drmRenderNode == (DrmNode{ 226, 128 }));
	VaApiContext noNode = validVaApi(); // an X11 or Wayland display does not tell its node
	noNode.renderNode.reset();
	ck_assert(Context::create(noNode).ok());

	refuse(noNode, ErrorCode::NullHandle, "display", [](auto &c) { c.display = nullptr; });
	refuse(noNode, ErrorCode::InvalidArgument, "renderNode",
	       [](auto &c) { c.renderNode = DrmNode{}; });
}
END_TEST

START_TEST(platform_contexts)
{
	ck_assert(Context::create(validD3D11()).ok());
	ck_assert(Context::create(validD3D12()).ok());
	ck_assert(Context::create(validMetal()).ok());
	WebGpuContext webgpu = validWebGpu(); // adapter and instance may be null
	ck_assert(Context::create(webgpu).ok());
	webgpu.adapter = fakeHandle(1);
	webgpu.instance = fakeHandle(2);
	ck_assert(Context::create(webgpu).ok());

	auto null = ErrorCode::NullHandle;
	auto invalid = ErrorCode::InvalidArgument;
	refuse(validD3D11(), null, "device", [](auto &c) { c.device = nullptr; });
	refuse(validD3D11(), null, "deviceContext", [](auto &c) { c.deviceContext = nullptr; });
	refuse(validD3D11(), invalid, "luid", [](auto &c) { c.luid = Luid{}; });
	refuse(validD3D12(), null, "device", [](auto &c) { c.device = nullptr; });
	refuse(validD3D12(), null, "queue", [](auto &c) { c.queue = nullptr; });
	refuse(validD3D12(), invalid, "luid", [](auto &c) { c.luid = Luid{}; });
	refuse(validMetal(), null, "device", [](auto &c) { c.device = nullptr; });
	refuse(validMetal(), null, "queue", [](auto &c) { c.queue = nullptr; });
	refuse(validMetal(), invalid, "registryId", [](auto &c) { c.registryId = 0; });
	refuse(validWebGpu(), null, "device", [](auto &c) { c.device = nullptr; });
	refuse(validWebGpu(), null, "queue", [](auto &c) { c.queue = nullptr; });
}
END_TEST

START_TEST(accessors_wrong_kind)
{
	const ContextRef contexts[] = {
		Context::cpu(),
		*Context::create(validVulkan()),
		*Context::create(validGl()),
		*Context::create(validCuda()),
		*Context::create(validOpenCl()),
		*Context::create(validVaApi()),
		*Context::create(validD3D11()),
		*Context::create(validD3D12()),
		*Context::create(validMetal()),
		*Context::create(validWebGpu()),
	};
	const BackendKind kinds[] = {
		BackendKind::Vulkan, BackendKind::OpenGL, BackendKind::Cuda,
		BackendKind::OpenCl, BackendKind::VaApi,  BackendKind::D3D11,
		BackendKind::D3D12,  BackendKind::Metal,  BackendKind::WebGpu
	};
	for (const auto &context : contexts) {
		int matches = 0;
		for (BackendKind kind : kinds) {
			bool ok = accessorOk(*context, kind);
			ck_assert_int_eq(ok, context->backend() == kind);
			matches += ok;
		}
		ck_assert_int_eq(matches, context->backend() == BackendKind::Cpu ? 0 : 1);
	}
	auto wrong = contexts[3]->vulkan();
	ck_assert_string_eq(wrong.error().message(),
			    "The context is a cuda context; vulkan() needs a vulkan context.");
	ck_assert_string_eq(contexts[1]->webgpu().error().message(),
			    "The context is a vulkan context; webgpu() needs a webgpu context.");
}
END_TEST

START_TEST(identity_across_contexts)
{
	auto vulkan = *Context::create(validVulkan());
	auto cuda = *Context::create(validCuda());
	auto vaapi = *Context::create(validVaApi());
	auto gl = *Context::create(validGl());
	ck_assert(sameDevice(vulkan->deviceId(), cuda->deviceId()) == DeviceMatch::Same);
	ck_assert(sameDevice(vulkan->deviceId(), vaapi->deviceId()) == DeviceMatch::Same);
	ck_assert(sameDevice(gl->deviceId(), vulkan->deviceId()) == DeviceMatch::Unknown);
	ck_assert(sameDevice(Context::cpu()->deviceId(), vulkan->deviceId()) ==
		  DeviceMatch::Different);
	auto d3d11 = *Context::create(validD3D11());
	auto d3d12 = *Context::create(validD3D12());
	ck_assert(sameDevice(d3d11->deviceId(), d3d12->deviceId()) == DeviceMatch::Same);
	CudaContext other = validCuda();
	other.uuid = uuidOf(9);
	ck_assert(sameDevice(vulkan->deviceId(), (*Context::create(other))->deviceId()) ==
		  DeviceMatch::Different);
}
END_TEST

START_TEST(anchor_lifetime)
{
	destroyed = 0;
	{
		auto context = Context::create(validVulkan(), makeKeepAlive(countDestroy, nullptr));
		ck_assert(context.ok());
		ContextRef shared = *context;
		ck_assert_ptr_nonnull((*context)->anchor().get());
		// Drops one reference; `shared` still holds it.
		context = Context::create(validGl());
		ck_assert_int_eq(destroyed, 0);
	}
	ck_assert_int_eq(destroyed, 1);

	// A refused context drops the anchor at once instead of leaking it.
	VulkanContext bad = validVulkan();
	bad.device = nullptr;
	{
		auto refused = Context::create(bad, makeKeepAlive(countDestroy, nullptr));
		ck_assert(!refused.ok());
	}
	ck_assert_int_eq(destroyed, 2);
	ck_assert_ptr_null(Context::cpu()->anchor().get());
}
END_TEST

int main()
{
	Suite *suite = suite_create("context");
	TCase *factories = tcase_create("factories");
	tcase_add_test(factories, cpu_context);
	tcase_add_test(factories, vulkan_valid);
	tcase_add_test(factories, vulkan_invalid);
	tcase_add_test(factories, gl_valid_and_invalid);
	tcase_add_test(factories, cuda_valid_and_invalid);
	tcase_add_test(factories, opencl_valid_and_invalid);
	tcase_add_test(factories, vaapi_valid_and_invalid);
	tcase_add_test(factories, platform_contexts);
	suite_add_tcase(suite, factories);

	TCase *use = tcase_create("use");
	tcase_add_test(use, accessors_wrong_kind);
	tcase_add_test(use, identity_across_contexts);
	tcase_add_test(use, anchor_lifetime);
	suite_add_tcase(suite, use);

	return gpuhandle::test::runSuite(suite);
}
