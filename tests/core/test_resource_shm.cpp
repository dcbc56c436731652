// ShmFd factory: range against the file, seals read from the fd, refusals, no fd leaks.
#include <gpuhandle/fd_resources.h>

#include "fd_count.h"

#include <sys/socket.h>
#include <unistd.h>

#include "check_helpers.h"

using namespace gpuhandle;
using gpuhandle::test::makeMemfd;
using gpuhandle::test::openFdCount;

START_TEST(unsealed_and_sealed_memfds)
{
	int before = openFdCount();
	{
		auto plain = ShmFd::create(
			{ .fd = SharedFd(makeMemfd(4096)), .offset = 0, .size = 4096 });
		ck_assert_ok(plain);
		ck_assert(!plain->isSealed());
		auto sealed = ShmFd::create(
			{ .fd = SharedFd(makeMemfd(4096, true)), .offset = 1024, .size = 3072 });
		ck_assert_ok(sealed);
		ck_assert(sealed->isSealed());
		ck_assert_uint_eq(sealed->desc().offset, 1024);
	}
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

START_TEST(refusals_close_the_given_fd)
{
	int before = openFdCount();
	ck_assert_error(ShmFd::create({ .fd = SharedFd(), .size = 1 }), ErrorCode::BadFd, "fd");
	ck_assert_error(ShmFd::create({ .fd = SharedFd(makeMemfd(64)), .size = 0 }),
			ErrorCode::ZeroSize, "size");
	ck_assert_error(ShmFd::create({ .fd = SharedFd(makeMemfd(64)), .size = 65 }),
			ErrorCode::OutOfRange, "size");
	ck_assert_error(ShmFd::create({ .fd = SharedFd(makeMemfd(64)), .offset = 60, .size = 8 }),
			ErrorCode::OutOfRange, "size");
	ck_assert_error(
		ShmFd::create({ .fd = SharedFd(makeMemfd(64)), .offset = UINT64_MAX, .size = 8 }),
		ErrorCode::OutOfRange, "size");
	int pair[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
	close(pair[1]);
	ck_assert_error(ShmFd::create({ .fd = SharedFd(UniqueFd(pair[0])), .size = 1 }),
			ErrorCode::InvalidArgument, "fd");
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

int main()
{
	Suite *s = suite_create("resource-shm");
	TCase *tc = tcase_create("shm");
	tcase_add_test(tc, unsealed_and_sealed_memfds);
	tcase_add_test(tc, refusals_close_the_given_fd);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
