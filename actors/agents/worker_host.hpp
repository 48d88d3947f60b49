#pragma once
// The agent's side of a remote device (actors/agents/remote_device.hpp): for each host_worker it
// builds the device and the model, answers, and serves that worker's calls on a thread of its
// own until the control process closes the link, the agent leaves the run, or the peer breaks
// the protocol (logged with the peer's name; only that link is closed).
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <caf/fwd.hpp>

#include "actors/common/messages.hpp"
#include "collectives/op_control.hpp"

namespace troupe::actors {

class hosted_replica;  // actors/agents/hosted_replica.hpp
struct agent_status;   // actors/agents/agent.hpp

class worker_hosts {
 public:
  // `data_host`: the interface tcp links bind on. `log` may be called from the serving threads.
  // `status`: the agent's counters (workers hosted, serving now, calls), when given.
  worker_hosts(caf::actor_system& sys, std::string data_host,
               std::function<void(const std::string&)> log,
               std::shared_ptr<agent_status> status = nullptr);
  // Ends every link (as end_all) and joins the threads.
  ~worker_hosts();
  worker_hosts(const worker_hosts&) = delete;
  worker_hosts& operator=(const worker_hosts&) = delete;

  // Builds the device and model of `w`; accepted: a thread now connects and serves it.
  msg::host_answer host(const msg::host_worker& w);
  // The control process is gone or the run is over: every serving thread stops.
  void end_all(const std::string& why);
  // The control process gave up the process ring named `prefix`: every replica here in it
  // stops waiting for its peers (hosted_replica::abort_ring).
  void abort_ring(const std::string& prefix);
  // Threads serving now.
  int serving() const;

 private:
  caf::actor_system& sys_;
  std::string data_host_;
  std::function<void(const std::string&)> log_;
  std::shared_ptr<agent_status> status_;
  std::shared_ptr<collectives::abort_signal> stop_ = std::make_shared<collectives::abort_signal>();
  mutable std::mutex mu_;
  // Serving threads with their "finished" flags: a finished one is joined at the next host(),
  // so a long-lived agent does not collect one thread per worker it ever served.
  struct serving_thread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done = std::make_shared<std::atomic<bool>>(false);
  };
  std::vector<serving_thread> threads_;
  std::vector<std::weak_ptr<hosted_replica>> replicas_;  // of the workers served
  std::shared_ptr<std::atomic<int>> serving_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace troupe::actors
