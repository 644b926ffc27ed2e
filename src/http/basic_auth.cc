#include "http/basic_auth.h"

#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "model/error.h"
#include "model/text.h"
#include "os/web_config.h"

namespace gpumap {
namespace {

std::optional<std::string> base64_decode(const std::string& in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else if (pad || (v[k] = val(c)) < 0) {
        return std::nullopt;
      }
    }
    uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>(n >> 16);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(n & 0xff);
  }
  return out;
}

}  // namespace

struct BasicAuth::State {
  struct Job {
    std::string key, password, hash;
    bool known = false;  // a user of the config (else `hash` is the dummy one and nothing matches)
  };
  std::mutex m;
  std::condition_variable cv;
  std::map<std::string, std::deque<Job>> queues;  // by the client's address
  std::deque<std::string> turns;                   // addresses with checks waiting, in the order served
  size_t queued = 0;
  std::set<std::string> waiting;  // keys queued or being checked
  std::set<std::string> allowed, denied;
  std::deque<std::string> allowed_order, denied_order;  // oldest first, to forget past the bounds
  bool stop = false, busy = false;
  size_t runs = 0;
  int wake_r = -1, wake_w = -1;
  Verify verify;
  ~State() {
    if (wake_r >= 0) close(wake_r);
    if (wake_w >= 0) close(wake_w);
  }
  // The next check: the address whose turn it is, its first job of a known user (else its first);
  // the address goes to the back of the turns while it has more.  Under m, queued > 0.
  Job next() {
    std::string peer = std::move(turns.front());
    turns.pop_front();
    std::deque<Job>& q = queues[peer];
    auto pick = std::find_if(q.begin(), q.end(), [](const Job& j) { return j.known; });
    if (pick == q.end()) pick = q.begin();
    Job job = std::move(*pick);
    q.erase(pick);
    --queued;
    if (q.empty()) queues.erase(peer);
    else turns.push_back(std::move(peer));
    return job;
  }
  void remember(const std::string& key, bool ok) {
    std::set<std::string>& set = ok ? allowed : denied;
    std::deque<std::string>& order = ok ? allowed_order : denied_order;
    if (!set.insert(key).second) return;
    order.push_back(key);
    if (order.size() > (ok ? kMaxAllowed : kMaxDenied)) {
      set.erase(order.front());
      order.pop_front();
    }
  }
};

namespace {

// The checking thread: one bcrypt check at a time, off the server's loop.
void check_credentials(std::shared_ptr<BasicAuth::State> st) {
  std::unique_lock<std::mutex> lock(st->m);
  for (;;) {
    st->cv.wait(lock, [&] { return st->stop || st->queued > 0; });
    if (st->stop) return;
    BasicAuth::State::Job job = st->next();
    st->busy = true;
    lock.unlock();
    bool ok = st->verify(job.password, job.hash) && job.known;
    lock.lock();
    st->busy = false;
    ++st->runs;
    st->waiting.erase(job.key);
    st->remember(job.key, ok);
    char b = 1;
    [[maybe_unused]] ssize_t n = write(st->wake_w, &b, 1);
    st->cv.notify_all();
  }
}

// What the caches are keyed by: the user and a SHA-256 of the password (never the password).
std::string credential_key(const std::string& user, const std::string& password) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  std::string both = user + ":" + password;  // a user holds no ':'
  SHA256(reinterpret_cast<const unsigned char*>(both.data()), both.size(), digest);
  return user + ":" + std::string(reinterpret_cast<const char*>(digest), sizeof digest);
}

}  // namespace

BasicAuth::BasicAuth(std::map<std::string, std::string> users, Verify verify)
    : st_(std::make_shared<State>()), users_(std::move(users)) {
  st_->verify = verify ? std::move(verify) : Verify(password_matches);
  int p[2];
  if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) throw Error(kExitError, std::string("pipe: ") + std::strerror(errno));
  st_->wake_r = p[0];
  st_->wake_w = p[1];
  // A hash for unknown users, of the default cost: the same work as a known user's of that cost.
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2b$", kDefaultCost, nullptr, 0, salt, sizeof salt)) {
    crypt_data data;
    std::memset(&data, 0, sizeof data);
    if (const char* h = crypt_r("gpumap: no such user", salt, &data)) dummy_hash_ = h;
  }
  std::thread(check_credentials, st_).detach();  // it holds the state; ends when told to stop
}

BasicAuth::~BasicAuth() {
  std::lock_guard<std::mutex> lock(st_->m);
  st_->stop = true;
  st_->queues.clear();
  st_->turns.clear();
  st_->queued = 0;
  st_->cv.notify_all();
}

int BasicAuth::wake_fd() const { return st_->wake_r; }

size_t BasicAuth::checks_run() const {
  std::lock_guard<std::mutex> lock(st_->m);
  return st_->runs;
}

BasicAuth::Verdict BasicAuth::check(const std::string& authorization, const std::string& peer) {
  if (authorization.size() < 6 || strncasecmp(authorization.c_str(), "Basic ", 6) != 0) return Verdict::kDenied;
  std::optional<std::string> pair = base64_decode(trim(authorization.substr(6)));
  if (!pair) return Verdict::kDenied;
  size_t colon = pair->find(':');
  if (colon == std::string::npos) return Verdict::kDenied;
  std::string user = pair->substr(0, colon), password = pair->substr(colon + 1);
  std::string key = credential_key(user, password);
  auto it = users_.find(user);
  std::lock_guard<std::mutex> lock(st_->m);
  if (st_->allowed.count(key)) return Verdict::kAllowed;
  if (st_->denied.count(key)) return Verdict::kDenied;
  if (st_->waiting.count(key)) return Verdict::kPending;
  if (it == users_.end() && dummy_hash_.empty()) return Verdict::kDenied;
  auto q = st_->queues.find(peer);
  size_t mine = q == st_->queues.end() ? 0 : q->second.size();
  if (mine >= kMaxQueued || st_->queued >= kMaxQueuedTotal) return Verdict::kBusy;
  if (mine == 0) st_->turns.push_back(peer);
  st_->queues[peer].push_back({key, password, it != users_.end() ? it->second : dummy_hash_, it != users_.end()});
  ++st_->queued;
  st_->waiting.insert(key);
  st_->cv.notify_all();
  return Verdict::kPending;
}

bool BasicAuth::allows(const std::string& authorization) {
  for (;;) {
    // The count of finished checks is read before the check is queued: the worker may finish it
    // before this thread waits, and a count read after that would wait for a check that never comes.
    size_t runs;
    {
      std::lock_guard<std::mutex> lock(st_->m);
      runs = st_->runs;
    }
    Verdict v = check(authorization);
    if (v != Verdict::kPending) return v == Verdict::kAllowed;
    std::unique_lock<std::mutex> lock(st_->m);
    st_->cv.wait(lock, [&] { return st_->runs != runs || st_->stop; });
  }
}

}  // namespace gpumap
