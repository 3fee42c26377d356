#include "core/cpu_set.h"

#include <sched.h>

#include <algorithm>
#include <iterator>

namespace sluice {

namespace {

// A whole number at the start of `text`, which it then leaves; -1 when there is none.
int TakeNumber(std::string_view& text) {
  size_t n = 0;
  int value = 0;
  while (n < text.size() && text[n] >= '0' && text[n] <= '9' && n < 7) value = value * 10 + (text[n++] - '0');
  if (n == 0 || (n < text.size() && text[n] >= '0' && text[n] <= '9')) return -1;
  text.remove_prefix(n);
  return value;
}

}  // namespace

std::vector<int> ParseCpuList(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::vector<int> cpus;
  while (!text.empty()) {
    const int first = TakeNumber(text);
    int last = first;
    if (!text.empty() && text.front() == '-') {
      text.remove_prefix(1);
      last = TakeNumber(text);
    }
    if (first < 0 || last < first || last >= CPU_SETSIZE) return {};
    for (int c = first; c <= last; ++c) cpus.push_back(c);
    if (text.empty()) break;
    if (text.front() != ',' || text.size() == 1) return {};
    text.remove_prefix(1);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<int> ProcessCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::vector<int> IntersectCpus(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  return both;
}

bool PinThread(pthread_t thread, const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  return pthread_setaffinity_np(thread, sizeof(set), &set) == 0;
}

}  // namespace sluice
