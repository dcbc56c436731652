// Counts open fds through /proc/self/fd and makes memfds for the tests.
#include "fd_count.h"

#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace gpuhandle::test {

int openFdCount()
{
	DIR *dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	int count = 0;
	while (struct dirent *entry = readdir(dir)) {
		if (entry->d_name[0] != '.')
			++count;
	}
	closedir(dir);
	return count - 1; // the directory's own fd
}

std::string openFdList()
{
	DIR *dir = opendir("/proc/self/fd");
	if (!dir)
		return "(no /proc/self/fd)";
	const int own = dirfd(dir);
	std::string list;
	while (struct dirent *entry = readdir(dir)) {
		if (entry->d_name[0] == '.' || std::atoi(entry->d_name) == own)
			continue;
		char target[256] = {};
		const ssize_t n = readlinkat(own, entry->d_name, target, sizeof target - 1);
		list += (list.empty() ? "" : ", ") + std::string(entry->d_name) + " " +
			(n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string("?"));
	}
	closedir(dir);
	return list;
}

UniqueFd makeMemfd(uint64_t size, bool sealed)
{
	UniqueFd fd(memfd_create("gpuhandle-test", MFD_CLOEXEC | MFD_ALLOW_SEALING));
	if (!fd.isValid())
		return fd;
	if (ftruncate(fd.get(), static_cast<off_t>(size)) != 0)
		return UniqueFd();
	if (sealed && fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
		return UniqueFd();
	return fd;
}

} // namespace gpuhandle::test
