// UniqueFd, SharedFd and KeepAlive: closed exactly once, shared by copy, borrowed with an anchor.
#include <gpuhandle/fd.h>
#include <gpuhandle/keep_alive.h>

#include "fd_count.h"

#include <fcntl.h>
#include <memory>
#include <unistd.h>

#include "check_helpers.h"

using namespace gpuhandle;
using gpuhandle::test::makeMemfd;
using gpuhandle::test::openFdCount;

START_TEST(unique_fd_closes_once)
{
	int before = openFdCount();
	int raw;
	{
		UniqueFd fd = makeMemfd(64);
		raw = fd.get();
		ck_assert(fd.isValid());
		ck_assert_int_eq(openFdCount(), before + 1);
		UniqueFd moved = std::move(fd);
		ck_assert(!fd.isValid());
		ck_assert_int_eq(moved.get(), raw);
	}
	ck_assert_int_eq(openFdCount(), before);
	ck_assert(!isOpenFd(raw));
}
END_TEST

START_TEST(unique_fd_release_gives_up_ownership)
{
	UniqueFd fd = makeMemfd(64);
	int raw = fd.release();
	ck_assert(!fd.isValid());
	ck_assert(isOpenFd(raw));
	close(raw);
}
END_TEST

START_TEST(shared_fd_closes_with_last_copy)
{
	int before = openFdCount();
	SharedFd a(makeMemfd(64));
	int raw = a.get();
	ck_assert(a.isOwned());
	{
		SharedFd b = a;
		SharedFd c = b;
		ck_assert(b == a);
		ck_assert_int_eq(c.get(), raw);
		a = SharedFd();
		ck_assert(isOpenFd(raw));
	}
	ck_assert(!isOpenFd(raw));
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

// An importer's value lives with the owner: every copy finds it, a dup() does not, the first
// value of a key stays, and it goes with the last copy while the fd is still open.
START_TEST(attachments_live_with_the_owner)
{
	int key = 0, otherKey = 0;
	SharedFd a(makeMemfd(64));
	int raw = a.get();
	struct Value {
		int fd;
		bool *fdOpenAtDestruction;
		~Value() { *fdOpenAtDestruction = isOpenFd(fd); }
	};
	bool openAtDestruction = false;
	auto value = std::make_shared<Value>(Value{ raw, &openAtDestruction });
	std::weak_ptr<Value> watch = value;
	openAtDestruction = false; // the temporary Value{} above set it
	ck_assert_ptr_eq(a.attach(&key, value).get(), value.get());
	value.reset();
	{
		SharedFd copy = a;
		ck_assert_ptr_eq(copy.attachment(&key).get(), watch.lock().get());
		// A second value under the key is not stored: the first is returned.
		auto second = std::make_shared<int>(2);
		ck_assert_ptr_eq(copy.attach(&key, second).get(), watch.lock().get());
		ck_assert_ptr_null(copy.attachment(&otherKey).get());
		SharedFd dup(a.dup());
		ck_assert_ptr_null(dup.attachment(&key).get());
	}
	ck_assert(!watch.expired());
	a = SharedFd();
	ck_assert(watch.expired());
	ck_assert(openAtDestruction);
	ck_assert(!isOpenFd(raw));
	SharedFd empty;
	ck_assert_ptr_null(empty.attach(&key, std::make_shared<int>(1)).get());
	ck_assert_ptr_null(empty.attachment(&key).get());
}
END_TEST

static int g_anchorReleased = 0;
static int g_anchorConsumed = 0;

START_TEST(borrowed_fd_stays_open_and_releases_anchor)
{
	g_anchorReleased = 0;
	g_anchorConsumed = 0;
	UniqueFd owner = makeMemfd(64);
	{
		KeepAliveRef anchor = makeKeepAlive([](void *) { ++g_anchorReleased; }, nullptr,
						    [](void *) { ++g_anchorConsumed; });
		SharedFd borrowed = SharedFd::borrow(owner.get(), anchor);
		anchor.reset();
		ck_assert(!borrowed.isOwned());
		SharedFd copy = borrowed;
		copy.markConsumed();
		ck_assert_int_eq(g_anchorConsumed, 1);
		ck_assert_int_eq(g_anchorReleased, 0);
	}
	ck_assert_int_eq(g_anchorReleased, 1);
	ck_assert(isOpenFd(owner.get()));
}
END_TEST

START_TEST(dup_makes_an_independent_owner)
{
	int before = openFdCount();
	{
		SharedFd a(makeMemfd(64));
		UniqueFd copy = a.dup();
		ck_assert(copy.isValid());
		ck_assert_int_ne(copy.get(), a.get());
		ck_assert(fcntl(copy.get(), F_GETFD) & FD_CLOEXEC);
		ck_assert(!SharedFd().dup().isValid());
	}
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

START_TEST(invalid_inputs_give_empty_values)
{
	ck_assert(!SharedFd(UniqueFd()).isValid());
	ck_assert(!SharedFd::borrow(-1, nullptr).isValid());
	ck_assert(!isOpenFd(-1));
	ck_assert(!isOpenFd(100000));
	ck_assert(makeKeepAlive(nullptr, nullptr) == nullptr);
}
END_TEST

int main()
{
	Suite *s = suite_create("fd");
	TCase *tc = tcase_create("fd");
	tcase_add_test(tc, unique_fd_closes_once);
	tcase_add_test(tc, unique_fd_release_gives_up_ownership);
	tcase_add_test(tc, shared_fd_closes_with_last_copy);
	tcase_add_test(tc, attachments_live_with_the_owner);
	tcase_add_test(tc, borrowed_fd_stays_open_and_releases_anchor);
	tcase_add_test(tc, dup_makes_an_independent_owner);
	tcase_add_test(tc, invalid_inputs_give_empty_values);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
