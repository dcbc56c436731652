// Test helper: probes a platform in a forked child, exiting 77 (skip) with the reason if absent.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace gpuhandle::test {

// Runs `open` (empty on success, else why the platform is absent) in a forked child, so that
// this process starts no driver threads before Check forks its tests. Returns the child's exit
// status: 0 when `open` succeeded, 77 (after printing "SKIP: <why>") when it did not, 1 when the
// child did not exit normally.
inline int probeInChild(const std::function<std::string()> &open)
{
	pid_t child = fork();
	if (child == 0) {
		std::string why = open();
		if (!why.empty()) {
			std::printf("SKIP: %s\n", why.c_str());
			std::fflush(stdout);
			_exit(77);
		}
		_exit(0);
	}
	int status = 0;
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

} // namespace gpuhandle::test
