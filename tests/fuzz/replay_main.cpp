// Runs a fuzz harness without libFuzzer (any compiler): every seed of a corpus directory, then a
// fixed number of deterministic mutations of each (byte flips, interesting values, truncations,
// repeats, splices). CI runs this in every build; the libFuzzer build (-Dfuzz=enabled) explores.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

std::vector<uint8_t> readFile(const std::string &path)
{
	std::vector<uint8_t> bytes;
	if (FILE *f = std::fopen(path.c_str(), "rb")) {
		uint8_t buffer[4096];
		size_t n;
		while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0)
			bytes.insert(bytes.end(), buffer, buffer + n);
		std::fclose(f);
	}
	return bytes;
}

// xorshift64*: the same mutations on every run, so that a failure reproduces.
struct Random {
	uint64_t state;
	uint64_t next()
	{
		state ^= state >> 12;
		state ^= state << 25;
		state ^= state >> 27;
		return state * 0x2545f4914f6cdd1dULL;
	}
	size_t below(size_t n) { return n ? static_cast<size_t>(next() % n) : 0; }
};

std::vector<uint8_t> mutate(std::vector<uint8_t> bytes, const std::vector<uint8_t> &other,
			    Random &random)
{
	static const uint8_t kInteresting[] = { 0, 1, 0x7f, 0x80, 0xfe, 0xff };
	const int edits = 1 + static_cast<int>(random.below(4));
	for (int e = 0; e < edits; ++e) {
		switch (random.below(5)) {
		case 0: // flip bits of one byte
			if (!bytes.empty())
				bytes[random.below(bytes.size())] ^=
					static_cast<uint8_t>(1 + random.below(255));
			break;
		case 1: // an interesting value
			if (!bytes.empty())
				bytes[random.below(bytes.size())] = kInteresting[random.below(6)];
			break;
		case 2: // truncate
			bytes.resize(random.below(bytes.size() + 1));
			break;
		case 3: { // repeat a chunk
			if (bytes.empty())
				break;
			const size_t at = random.below(bytes.size());
			const size_t len =
				std::min<size_t>(1 + random.below(16), bytes.size() - at);
			std::vector<uint8_t> chunk(bytes.begin() + long(at),
						   bytes.begin() + long(at + len));
			bytes.insert(bytes.begin() + long(random.below(bytes.size())),
				     chunk.begin(), chunk.end());
			break;
		}
		default: // splice in another seed's tail
			if (!other.empty()) {
				const size_t at = random.below(bytes.size() + 1);
				bytes.resize(at);
				bytes.insert(bytes.end(),
					     other.begin() + long(random.below(other.size())),
					     other.end());
			}
		}
	}
	return bytes;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 3) {
		std::fprintf(stderr, "usage: %s CORPUS-DIR MUTATIONS-PER-SEED\n", argv[0]);
		return 2;
	}
	const std::string dir = argv[1];
	const long mutations = std::strtol(argv[2], nullptr, 10);
	std::vector<std::string> names;
	if (DIR *d = opendir(dir.c_str())) {
		while (dirent *entry = readdir(d)) {
			if (entry->d_name[0] != '.')
				names.emplace_back(entry->d_name);
		}
		closedir(d);
	}
	std::sort(names.begin(), names.end());
	if (names.empty()) {
		std::fprintf(stderr, "%s: no seeds in %s\n", argv[0], dir.c_str());
		return 1;
	}
	std::vector<std::vector<uint8_t>> seeds;
	for (const std::string &name : names)
		seeds.push_back(readFile(dir + "/" + name));
	uint64_t runs = 0;
	for (size_t s = 0; s < seeds.size(); ++s) {
		LLVMFuzzerTestOneInput(seeds[s].data(), seeds[s].size());
		++runs;
		Random random{ 0x9e3779b97f4a7c15ULL ^ (s + 1) };
		for (long m = 0; m < mutations; ++m) {
			auto input = mutate(seeds[s], seeds[random.below(seeds.size())], random);
			LLVMFuzzerTestOneInput(input.data(), input.size());
			++runs;
		}
	}
	std::printf("%s: %zu seeds, %llu inputs run, 0 crashes\n", argv[0], seeds.size(),
		    static_cast<unsigned long long>(runs));
	return 0;
}
