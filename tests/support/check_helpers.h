// Check helpers shared by the suites: error assertions and a suite runner.
#pragma once

#include <gpuhandle/uuid.h>

#include <cstdint>
#include <cstdlib>
#include <string>

// Last: Check defines a fail() macro that breaks standard headers included after it.
#include <check.h>

// Asserts that `result` failed with `expected_code` and names `expected_field`, with a non-empty
// sentence.
#define ck_assert_error(result, expected_code, expected_field)                                     \
	do {                                                                                       \
		const auto &r_ = (result);                                                         \
		ck_assert_msg(!r_.ok(), "expected %s to fail", #result);                           \
		ck_assert_msg(r_.error().code() == (expected_code),                                \
			      "%s: got error code %d (%s): %s", #result,                           \
			      static_cast<int>(r_.error().code()),                                 \
			      gpuhandle::errorCodeName(r_.error().code()),                         \
			      r_.error().message().c_str());                                       \
		ck_assert_str_eq(r_.error().field(), expected_field);                              \
		ck_assert(!r_.error().message().empty());                                          \
	} while (0)

// Asserts that `result` succeeded, printing the error's sentence otherwise.
#define ck_assert_ok(result)                                                                       \
	do {                                                                                       \
		const auto &r_ = (result);                                                         \
		ck_assert_msg(r_.ok(), "%s failed: %s", #result,                                   \
			      r_.ok() ? "" : r_.error().message().c_str());                        \
	} while (0)

// ck_assert_str_eq on a value converted to std::string first, so that a temporary string
// outlives the check (Check keeps only the pointers it is given).
#define ck_assert_string_eq(actual, expected)                                                      \
	do {                                                                                       \
		const std::string actual_ = (actual);                                              \
		ck_assert_str_eq(actual_.c_str(), expected);                                       \
	} while (0)

namespace gpuhandle::test {

// A fake native handle: the core stores handles but never dereferences them.
inline void *fakeHandle(uintptr_t value)
{
	return reinterpret_cast<void *>(value);
}

// A UUID whose bytes are seed, seed + 1, ... (never all zero for seed != 0).
inline gpuhandle::Uuid uuidOf(uint8_t seed)
{
	gpuhandle::Uuid uuid{};
	for (size_t i = 0; i < uuid.size(); i++)
		uuid[i] = static_cast<uint8_t>(seed + i);
	return uuid;
}

// True in builds with AddressSanitizer or ThreadSanitizer and under valgrind (the valgrind setup
// sets GPUHANDLE_UNDER_VALGRIND), where code runs 5-50 times slower: exhaustive tests then take a
// tenth of their iterations (see scaledCount) so that they fit their timeouts.
inline bool slowRuntime()
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return true;
#else
	return std::getenv("GPUHANDLE_UNDER_VALGRIND") != nullptr;
#endif
}

// `count`, or a tenth of it (at least 1) in a slow runtime.
inline long scaledCount(long count)
{
	return slowRuntime() ? (count / 10 > 0 ? count / 10 : 1) : count;
}

// Runs `suite` and returns the process exit status (0 when every test passed).
inline int runSuite(Suite *suite)
{
	SRunner *runner = srunner_create(suite);
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

} // namespace gpuhandle::test
