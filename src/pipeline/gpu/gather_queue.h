// GatherQueue: batches' work waiting for the JPEG engines, taken several jobs at a time, so that
// one engine call can decode the images of several batches. At batch 32 a batch's engine share
// is about 25 images, and on the VOC-like set the engines alone decode 24,300 images/s in calls
// of 28 against 34,600 in calls of 224 (docs/benchmarks.md, issue 21).
//
//   GatherQueue<Job> q;
//   q.Push(job, 25);                         // a batch planned 25 images for the engines
//   std::vector<Job> jobs = q.Take(224);     // an engine thread: the oldest job, and the ones
//                                            // after it while their images fit in 224
//
// Thread-safety: all methods may be called from any thread.
#ifndef SLUICE_PIPELINE_GPU_GATHER_QUEUE_H_
#define SLUICE_PIPELINE_GPU_GATHER_QUEUE_H_

#include <deque>
#include <mutex>
#include <utility>
#include <vector>

namespace sluice {

template <typename Job>
class GatherQueue {
 public:
  // REQUIRES: images >= 0.
  void Push(Job job, int images) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.emplace_back(std::move(job), images);
  }

  // The oldest job whatever its size, then the next ones in order while the images taken stay
  // within max_images; none when the queue is empty.
  std::vector<Job> Take(int max_images) {
    std::vector<Job> out;
    std::lock_guard<std::mutex> lock(mu_);
    int taken = 0;
    while (!queue_.empty() && (out.empty() || taken + queue_.front().second <= max_images)) {
      taken += queue_.front().second;
      out.push_back(std::move(queue_.front().first));
      queue_.pop_front();
    }
    return out;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return queue_.size();
  }

 private:
  mutable std::mutex mu_;
  std::deque<std::pair<Job, int>> queue_;
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_GATHER_QUEUE_H_
