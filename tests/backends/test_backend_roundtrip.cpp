// CPU and memfd frames into every backend that opens here and back, byte-identical, through the
// planner: NV12, I420, P010, RGBA and v210 at odd, tiny and 4K sizes. The routes taken are
// printed; backends that do not open here are listed with the reason.
#include <gpuhandle/backends/planner.h>

#include "fd_count.h"
#include "frame_pattern.h"

#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>

#include "check_helpers.h"

using namespace gpuhandle;

namespace {

constexpr PixelFormat kFormats[] = { PixelFormat::NV12, PixelFormat::YUV420P, PixelFormat::P010LE,
				     PixelFormat::RGBA, PixelFormat::V210 };
struct Size {
	uint32_t width = 0;
	uint32_t height = 0;
};
constexpr Size kSizes[] = { { 33, 17 }, { 1, 1 }, { 3840, 2160 } };

// The backends under test (filled in main() from probes run in a child, so that this process
// starts no driver before Check forks).
std::vector<BackendKind> g_targets;

BackendRef open(BackendKind kind)
{
	Result<BackendRef> backend = openBackend(kind);
	ck_assert_msg(backend.ok(), "%s: %s", backendKindName(kind),
		      backend.ok() ? "" : backend.error().message().c_str());
	return *backend;
}

START_TEST(frames_go_into_the_backend_and_back_identical)
{
	const BackendKind kind = g_targets[static_cast<size_t>(_i)];
	BackendRef target = open(kind);
	BackendRef cpu = open(BackendKind::Cpu);
	BackendRef fd = open(BackendKind::Fd);
	const int fdsBefore = test::openFdCount();
	uint32_t seed = 11;
	for (const BackendRef &source : { cpu, fd }) {
		for (PixelFormat format : kFormats) {
			for (Size size : kSizes) {
				const char *what = pixelFormatName(format);
				AllocateRequest request;
				request.format = format;
				request.width = size.width;
				request.height = size.height;
				Frame frame = source->allocate(request).value();
				ck_assert_string_eq(test::writePattern(*source, frame, seed), "");

				ImportOptions there;
				there.source = source;
				Result<ImportResult> in = importFrame(frame, *target, there);
				ck_assert_msg(in.ok(), "%s %ux%u from %s into %s: %s", what,
					      size.width, size.height,
					      backendKindName(source->kind()),
					      backendKindName(kind),
					      in.ok() ? "" : in.error().message().c_str());
				ImportOptions back;
				back.source = target;
				Result<ImportResult> out = importFrame(in->frame, *cpu, back);
				ck_assert_msg(out.ok(), "%s %ux%u from %s back to cpu: %s", what,
					      size.width, size.height, backendKindName(kind),
					      out.ok() ? "" : out.error().message().c_str());
				std::string mismatch = test::checkPattern(*cpu, out->frame, seed);
				ck_assert_msg(mismatch.empty(), "%s %ux%u %s -> %s -> cpu: %s",
					      what, size.width, size.height,
					      backendKindName(source->kind()),
					      backendKindName(kind), mismatch.c_str());
				std::printf("%s -> %s -> cpu, %s %ux%u: %s (%s), back %s (%s)\n",
					    backendKindName(source->kind()), backendKindName(kind),
					    what, size.width, size.height,
					    importRouteName(in->route),
					    executionPathKindName(in->path.kind()),
					    importRouteName(out->route),
					    executionPathKindName(out->path.kind()));
				++seed;
			}
		}
	}
	std::fflush(stdout);
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// Whether `kind` opens, tried in a child; prints why not.
bool opensHere(BackendKind kind)
{
	int pipeFds[2];
	if (pipe(pipeFds) != 0)
		return false;
	pid_t child = fork();
	if (child == 0) {
		close(pipeFds[0]);
		Result<BackendRef> backend = openBackend(kind);
		if (!backend.ok()) {
			const std::string &why = backend.error().message();
			(void)!write(pipeFds[1], why.data(), why.size());
			_exit(1);
		}
		_exit(0);
	}
	close(pipeFds[1]);
	char why[512] = {};
	ssize_t length = read(pipeFds[0], why, sizeof why - 1);
	close(pipeFds[0]);
	int status = 0;
	bool opened = child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0;
	if (!opened)
		std::printf("not tested here: %s: %s\n", backendKindName(kind),
			    length > 0 ? why : "the probe crashed");
	return opened;
}

} // namespace

int main()
{
	for (BackendKind kind : kInteropBackends)
		if (opensHere(kind))
			g_targets.push_back(kind);
	std::fflush(stdout);
	Suite *suite = suite_create("backend-roundtrip");
	TCase *tc = tcase_create("roundtrip");
	tcase_set_timeout(tc, 240);
	tcase_add_loop_test(tc, frames_go_into_the_backend_and_back_identical, 0,
			    static_cast<int>(g_targets.size()));
	suite_add_tcase(suite, tc);
	return test::runSuite(suite);
}
