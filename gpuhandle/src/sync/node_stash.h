// NodeStash, ListNodeStash: spare nodes of a map or list, reused instead of freed and allocated
// again.
#pragma once

#include <cstddef>
#include <iterator>
#include <list>
#include <utility>
#include <vector>

namespace gpuhandle::detail {

// Keeps up to N nodes erased from maps of type Map (std::multimap, std::unordered_map: any with
// extract() and node handles) for the next insertions, so that a container whose size stays
// about the same (a waiter thread's pending waits) allocates nothing in steady state. Not thread
// safe: guarded with the container.
template<typename Map, size_t N = 64>
class NodeStash
{
public:
	NodeStash() { spare_.reserve(N); }

	// Inserts (key, value) into `map`, in a spare node when there is one.
	typename Map::iterator insert(Map &map, const typename Map::key_type &key,
				      typename Map::mapped_type value)
	{
		if (spare_.empty())
			return iteratorOf(map.emplace(key, std::move(value)));
		typename Map::node_type node = std::move(spare_.back());
		spare_.pop_back();
		node.key() = key;
		node.mapped() = std::move(value);
		if constexpr (requires { typename Map::insert_return_type; }) // unique keys
			return map.insert(std::move(node)).position;
		else
			return map.insert(std::move(node));
	}

	// Erases `it` from `map`; what its value held is dropped now, its node kept (up to N).
	void erase(Map &map, typename Map::iterator it)
	{
		typename Map::node_type node = map.extract(it);
		node.mapped() = typename Map::mapped_type{};
		if (spare_.size() < N)
			spare_.push_back(std::move(node));
	}

private:
	static typename Map::iterator iteratorOf(typename Map::iterator it) { return it; }
	static typename Map::iterator iteratorOf(std::pair<typename Map::iterator, bool> result)
	{
		return result.first;
	}

	std::vector<typename Map::node_type> spare_;
};

// The same for std::list<T>: erased nodes are spliced into a spare list and back.
template<typename T, size_t N = 64>
class ListNodeStash
{
public:
	using Iterator = typename std::list<T>::iterator;

	Iterator pushBack(std::list<T> &list, T value)
	{
		if (spare_.empty()) {
			list.push_back(std::move(value));
		} else {
			list.splice(list.end(), spare_, spare_.begin());
			list.back() = std::move(value);
		}
		return std::prev(list.end());
	}

	void erase(std::list<T> &list, Iterator it)
	{
		*it = T{}; // dropped now, as erase() would
		if (spare_.size() < N)
			spare_.splice(spare_.end(), list, it);
		else
			list.erase(it);
	}

private:
	std::list<T> spare_;
};

} // namespace gpuhandle::detail
