/* Calls the probe of every header compiled alone, so each public header is proved to build by
 * itself. */
#include "header_probes.h"

#include <stdlib.h>

#include <check.h>

#define X(probe, name) int gpuhandle_probe_##probe(void);
GPUHANDLE_HEADER_PROBES(X)
#undef X

START_TEST(every_header_compiles_alone)
{
	int compiled = 0;
#define X(probe, name)                                                                             \
	ck_assert_msg(gpuhandle_probe_##probe() == 1, "%s did not compile alone", name);           \
	++compiled;
	GPUHANDLE_HEADER_PROBES(X)
#undef X
	ck_assert_int_eq(compiled, GPUHANDLE_HEADER_PROBE_COUNT);
	/* 27 C++ headers and 5 C headers at the time of writing; never fewer. */
	ck_assert_int_ge(compiled, 27 + 5 + 5);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("headers");
	TCase *tc = tcase_create("headers");
	SRunner *runner;
	int failed;
	tcase_add_test(tc, every_header_compiles_alone);
	suite_add_tcase(s, tc);
	runner = srunner_create(s);
	srunner_run_all(runner, CK_NORMAL);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
