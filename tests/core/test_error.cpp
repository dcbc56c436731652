// Error, ErrorKind, Result, Status and ExecutionPath: codes, kinds, names and messages.
#include <gpuhandle/error.h>
#include <gpuhandle/execution_path.h>
#include <gpuhandle/result.h>

#include <cstring>
#include <string>

#include "check_helpers.h"

using namespace gpuhandle;

START_TEST(kind_of_every_code)
{
	ck_assert(errorKindOf(ErrorCode::Cancelled) == ErrorKind::Cancelled);
	ck_assert(errorKindOf(ErrorCode::Timeout) == ErrorKind::Recoverable);
	ck_assert(errorKindOf(ErrorCode::WouldBlock) == ErrorKind::Recoverable);
	ck_assert(errorKindOf(ErrorCode::OutOfMemory) == ErrorKind::Recoverable);
	ck_assert(errorKindOf(ErrorCode::Io) == ErrorKind::Recoverable);
	ck_assert(errorKindOf(ErrorCode::NotSupported) == ErrorKind::Configuration);
	ck_assert(errorKindOf(ErrorCode::InvalidArgument) == ErrorKind::Configuration);
	ck_assert(errorKindOf(ErrorCode::BadFd) == ErrorKind::Configuration);
	ck_assert(errorKindOf(ErrorCode::WrongKind) == ErrorKind::Configuration);
	ck_assert(errorKindOf(ErrorCode::InvalidState) == ErrorKind::Configuration);
	ck_assert(errorKindOf(ErrorCode::DeviceMismatch) == ErrorKind::Configuration);
	ck_assert(errorKindOf(ErrorCode::DeviceLost) == ErrorKind::Fatal);
	ck_assert(errorKindOf(ErrorCode::Fatal) == ErrorKind::Fatal);
	ck_assert(errorKindOf(ErrorCode::Backend) == ErrorKind::Fatal);
}
END_TEST

START_TEST(every_code_has_a_distinct_name)
{
	std::string seen;
	for (int code = 1; code <= 18; ++code) {
		const char *name = errorCodeName(static_cast<ErrorCode>(code));
		ck_assert_str_ne(name, "unknown");
		std::string token = std::string("|") + name + "|";
		ck_assert_msg(seen.find(token) == std::string::npos, "duplicate name %s", name);
		seen += token;
	}
	ck_assert_str_eq(errorCodeName(static_cast<ErrorCode>(99)), "unknown");
	ck_assert_str_eq(errorKindName(ErrorKind::Recoverable), "recoverable");
}
END_TEST

START_TEST(format_puts_values_in_the_sentence)
{
	Error e = Error::format(ErrorCode::OutOfRange, "planes[1].pitch",
				"Pitch (%u) is smaller than %d.", 100u, 1920);
	ck_assert(e.code() == ErrorCode::OutOfRange);
	ck_assert(e.kind() == ErrorKind::Configuration);
	ck_assert_str_eq(e.field(), "planes[1].pitch");
	ck_assert_str_eq(e.message().c_str(), "Pitch (100) is smaller than 1920.");
}
END_TEST

START_TEST(result_holds_value_or_error)
{
	Result<int> good = 42;
	ck_assert(good.ok());
	ck_assert_int_eq(*good, 42);
	Result<int> bad = Error(ErrorCode::Timeout, "", "The wait ran out.");
	ck_assert(!bad.ok());
	ck_assert(bad.error().kind() == ErrorKind::Recoverable);

	Status fine;
	ck_assert(fine.ok());
	Status failed = Error(ErrorCode::Cancelled, "", "Cancelled.");
	ck_assert(!failed.ok());
	ck_assert(failed.error().kind() == ErrorKind::Cancelled);
}
END_TEST

START_TEST(execution_path_reports_kind_and_static_reason)
{
	constexpr ExecutionPath notRun;
	static_assert(notRun.kind() == ExecutionPath::Kind::NotRun);
	ExecutionPath cpu = ExecutionPath::cpuCopy("no common memory type");
	ck_assert(cpu.kind() == ExecutionPath::Kind::CpuCopy);
	ck_assert(cpu.isCopy());
	ck_assert_str_eq(cpu.reason(), "no common memory type");
	ck_assert(!ExecutionPath::zeroCopy().isCopy());
	ck_assert(cpu == ExecutionPath::cpuCopy("no common memory type"));
	ck_assert(!(cpu == ExecutionPath::cpuCopy("another reason")));
	ck_assert_str_eq(executionPathKindName(ExecutionPath::Kind::GpuCopy), "gpu-copy");
}
END_TEST

int main()
{
	Suite *s = suite_create("error");
	TCase *tc = tcase_create("error");
	tcase_add_test(tc, kind_of_every_code);
	tcase_add_test(tc, every_code_has_a_distinct_name);
	tcase_add_test(tc, format_puts_values_in_the_sentence);
	tcase_add_test(tc, result_holds_value_or_error);
	tcase_add_test(tc, execution_path_reports_kind_and_static_reason);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
