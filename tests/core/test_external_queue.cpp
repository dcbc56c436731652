// Tests of ExternalQueue: validated factories, typed accessors, backend checks against a Context.
#include <gpuhandle/context.h>
#include <gpuhandle/external_queue.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::test;

// A queue is a borrowed per-call value: copying it must cost nothing.
static_assert(std::is_trivially_copyable_v<ExternalQueue>);

namespace {

// Whether the accessor named after `kind` succeeds on `queue`; a failure must be WrongKind.
bool accessorOk(const ExternalQueue &queue, BackendKind kind)
{
	auto check = [](const auto &result) {
		if (!result.ok()) {
			ck_assert_int_eq(static_cast<int>(result.error().code()),
					 static_cast<int>(ErrorCode::WrongKind));
			ck_assert_str_eq(result.error().field(), "backend");
		}
		return result.ok();
	};
	switch (kind) {
	case BackendKind::Vulkan: return check(queue.vulkan());
	case BackendKind::OpenGL: return check(queue.opengl());
	case BackendKind::Cuda: return check(queue.cuda());
	case BackendKind::OpenCl: return check(queue.opencl());
	case BackendKind::D3D11: return check(queue.d3d11());
	case BackendKind::D3D12: return check(queue.d3d12());
	case BackendKind::Metal: return check(queue.metal());
	case BackendKind::WebGpu: return check(queue.webgpu());
	default: return false;
	}
}

} // namespace

START_TEST(cpu_queue)
{
	ExternalQueue cpu = ExternalQueue::cpu();
	ck_assert_int_eq(static_cast<int>(cpu.backend()), static_cast<int>(BackendKind::Cpu));
	ck_assert(std::holds_alternative<std::monostate>(cpu.native()));
	auto cuda = cpu.cuda();
	ck_assert_error(cuda, ErrorCode::WrongKind, "backend");
	ck_assert_string_eq(cuda.error().message(),
			    "The queue is a cpu queue; cuda() needs a cuda queue.");
}
END_TEST

START_TEST(vulkan_queue)
{
	auto queue = ExternalQueue::create(VulkanQueue{ fakeHandle(0x10), 3 });
	ck_assert(queue.ok());
	ck_assert_int_eq(static_cast<int>(queue->backend()), static_cast<int>(BackendKind::Vulkan));
	ck_assert_ptr_eq((*queue->vulkan())->queue, fakeHandle(0x10));
	ck_assert_uint_eq((*queue->vulkan())->familyIndex, 3);

	ck_assert_error(ExternalQueue::create(VulkanQueue{ nullptr, 0 }), ErrorCode::NullHandle,
			"queue");
	for (uint32_t special : { 0xfffffffdu, 0xfffffffeu, 0xffffffffu })
		ck_assert_error(ExternalQueue::create(VulkanQueue{ fakeHandle(0x10), special }),
				ErrorCode::OutOfRange, "familyIndex");
}
END_TEST

START_TEST(cuda_stream)
{
	// The legacy default stream (null), CU_STREAM_LEGACY and CU_STREAM_PER_THREAD are all
	// legal.
	for (uintptr_t stream :
	     { uintptr_t{ 0 }, uintptr_t{ 1 }, uintptr_t{ 2 }, uintptr_t{ 0x1000 } }) {
		auto queue = ExternalQueue::create(CudaStream{ fakeHandle(stream) });
		ck_assert(queue.ok());
		ck_assert_int_eq(static_cast<int>(queue->backend()),
				 static_cast<int>(BackendKind::Cuda));
		ck_assert_ptr_eq((*queue->cuda())->stream, fakeHandle(stream));
	}
}
END_TEST

START_TEST(other_queues)
{
	struct Case {
		Result<ExternalQueue> valid;
		Result<ExternalQueue> null;
		BackendKind backend;
		const char *field;
	};
	Case cases[] = {
		{ ExternalQueue::create(GlQueue{ fakeHandle(1) }), ExternalQueue::create(GlQueue{}),
		  BackendKind::OpenGL, "context" },
		{ ExternalQueue::create(OpenClQueue{ fakeHandle(1) }),
		  ExternalQueue::create(OpenClQueue{}), BackendKind::OpenCl, "queue" },
		{ ExternalQueue::create(D3D11DeviceContext{ fakeHandle(1) }),
		  ExternalQueue::create(D3D11DeviceContext{}), BackendKind::D3D11,
		  "deviceContext" },
		{ ExternalQueue::create(D3D12Queue{ fakeHandle(1) }),
		  ExternalQueue::create(D3D12Queue{}), BackendKind::D3D12, "queue" },
		{ ExternalQueue::create(MetalCommandBuffer{ fakeHandle(1) }),
		  ExternalQueue::create(MetalCommandBuffer{}), BackendKind::Metal,
		  "commandBuffer" },
		{ ExternalQueue::create(WebGpuEncoder{ fakeHandle(1) }),
		  ExternalQueue::create(WebGpuEncoder{}), BackendKind::WebGpu, "encoder" },
	};
	for (const Case &c : cases) {
		ck_assert(c.valid.ok());
		ck_assert_int_eq(static_cast<int>(c.valid->backend()), static_cast<int>(c.backend));
		ck_assert(accessorOk(*c.valid, c.backend));
		ck_assert_error(c.null, ErrorCode::NullHandle, c.field);
	}
	ck_assert_ptr_eq((*(*ExternalQueue::create(MetalCommandBuffer{ fakeHandle(7) })).metal())
				 ->commandBuffer,
			 fakeHandle(7));
}
END_TEST

START_TEST(accessors_wrong_kind)
{
	const ExternalQueue queues[] = {
		ExternalQueue::cpu(),
		*ExternalQueue::create(VulkanQueue{ fakeHandle(1), 0 }),
		*ExternalQueue::create(GlQueue{ fakeHandle(1) }),
		*ExternalQueue::create(CudaStream{}),
		*ExternalQueue::create(OpenClQueue{ fakeHandle(1) }),
		*ExternalQueue::create(D3D11DeviceContext{ fakeHandle(1) }),
		*ExternalQueue::create(D3D12Queue{ fakeHandle(1) }),
		*ExternalQueue::create(MetalCommandBuffer{ fakeHandle(1) }),
		*ExternalQueue::create(WebGpuEncoder{ fakeHandle(1) }),
	};
	const BackendKind kinds[] = { BackendKind::Vulkan, BackendKind::OpenGL, BackendKind::Cuda,
				      BackendKind::OpenCl, BackendKind::D3D11,  BackendKind::D3D12,
				      BackendKind::Metal,  BackendKind::WebGpu };
	for (const ExternalQueue &queue : queues) {
		int matches = 0;
		for (BackendKind kind : kinds) {
			bool ok = accessorOk(queue, kind);
			ck_assert_int_eq(ok, queue.backend() == kind);
			matches += ok;
		}
		ck_assert_int_eq(matches, queue.backend() == BackendKind::Cpu ? 0 : 1);
	}
	ck_assert_string_eq(queues[3].vulkan().error().message(),
			    "The queue is a cuda queue; vulkan() needs a vulkan queue.");
}
END_TEST

START_TEST(check_backend_against_context)
{
	VulkanContext vk;
	vk.instance = fakeHandle(1);
	vk.physicalDevice = fakeHandle(2);
	vk.device = fakeHandle(3);
	vk.queue = fakeHandle(4);
	auto vulkanContext = *Context::create(vk);
	VaApiContext va;
	va.display = fakeHandle(5);
	auto vaContext = *Context::create(va);

	ExternalQueue vulkanQueue = *ExternalQueue::create(VulkanQueue{ fakeHandle(4), 0 });
	ExternalQueue cudaStream = *ExternalQueue::create(CudaStream{});
	ck_assert(vulkanQueue.checkBackend(*vulkanContext).ok());
	ck_assert(ExternalQueue::cpu().checkBackend(*Context::cpu()).ok());

	Status mismatch = cudaStream.checkBackend(*vulkanContext);
	ck_assert(!mismatch.ok());
	ck_assert_int_eq(static_cast<int>(mismatch.error().code()),
			 static_cast<int>(ErrorCode::WrongKind));
	ck_assert_str_eq(mismatch.error().field(), "backend");
	ck_assert_string_eq(mismatch.error().message(),
			    "The queue is a cuda queue; the context is a vulkan context.");
	ck_assert(!ExternalQueue::cpu().checkBackend(*vulkanContext).ok());
	ck_assert(!vulkanQueue.checkBackend(*Context::cpu()).ok());
	ck_assert(!vulkanQueue.checkBackend(*vaContext).ok()); // VA-API has no queue kind
}
END_TEST

// Context::queue(): the queue each backend opened in a host's context submits on, the host's own
// handle and family, checked against its context; contexts without a one-call queue say why.
START_TEST(context_queue_is_the_hosts)
{
	VulkanContext vk;
	vk.instance = fakeHandle(1);
	vk.physicalDevice = fakeHandle(2);
	vk.device = fakeHandle(3);
	vk.queue = fakeHandle(4);
	vk.queueFamilyIndex = 2;
	auto vulkanContext = *Context::create(vk);
	Result<ExternalQueue> queue = vulkanContext->queue();
	ck_assert_ok(queue);
	ck_assert_ptr_eq((*queue->vulkan())->queue, fakeHandle(4));
	ck_assert_uint_eq((*queue->vulkan())->familyIndex, 2);
	ck_assert(queue->checkBackend(*vulkanContext).ok());

	CudaContext cuda;
	cuda.context = fakeHandle(5);
	cuda.stream = fakeHandle(6);
	Result<ExternalQueue> stream = (*Context::create(cuda))->queue();
	ck_assert_ok(stream);
	ck_assert_ptr_eq((*stream->cuda())->stream, fakeHandle(6));

	OpenClContext cl;
	cl.context = fakeHandle(7);
	cl.device = fakeHandle(8);
	cl.queue = fakeHandle(9);
	Result<ExternalQueue> clQueue = (*Context::create(cl))->queue();
	ck_assert_ok(clQueue);
	ck_assert_ptr_eq((*clQueue->opencl())->queue, fakeHandle(9));

	Result<ExternalQueue> cpu = Context::cpu()->queue();
	ck_assert_ok(cpu);
	ck_assert(cpu->backend() == BackendKind::Cpu);

	VaApiContext va;
	va.display = fakeHandle(10);
	Result<ExternalQueue> none = (*Context::create(va))->queue();
	ck_assert(!none.ok());
	ck_assert(none.error().code() == ErrorCode::NotSupported);
	ck_assert_str_eq(none.error().field(), "queue");
}
END_TEST

START_TEST(copy_is_plain)
{
	ExternalQueue a = *ExternalQueue::create(VulkanQueue{ fakeHandle(9), 1 });
	ExternalQueue b = a;
	ck_assert_int_eq(static_cast<int>(b.backend()), static_cast<int>(BackendKind::Vulkan));
	ck_assert_ptr_eq((*b.vulkan())->queue, fakeHandle(9));
	b = ExternalQueue::cpu(); // reassigning the copy leaves the original alone
	ck_assert_int_eq(static_cast<int>(a.backend()), static_cast<int>(BackendKind::Vulkan));
}
END_TEST

int main()
{
	Suite *suite = suite_create("external_queue");
	TCase *factories = tcase_create("factories");
	tcase_add_test(factories, cpu_queue);
	tcase_add_test(factories, vulkan_queue);
	tcase_add_test(factories, cuda_stream);
	tcase_add_test(factories, other_queues);
	suite_add_tcase(suite, factories);

	TCase *use = tcase_create("use");
	tcase_add_test(use, accessors_wrong_kind);
	tcase_add_test(use, check_backend_against_context);
	tcase_add_test(use, context_queue_is_the_hosts);
	tcase_add_test(use, copy_is_plain);
	suite_add_tcase(suite, use);

	return gpuhandle::test::runSuite(suite);
}
