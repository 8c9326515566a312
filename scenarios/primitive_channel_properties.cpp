// The Channel and select properties of the primitives suite: a closed channel drains before it
// reports closed, and select performs exactly one ready case, chosen as the strategy says.
#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/errc.hpp>
#include <bubble/scenarios/primitive_properties.hpp>
#include <bubble/scenarios/show.hpp>
#include <bubble/select.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/property.hpp>

#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <system_error>
#include <vector>

namespace bubble::scenarios {
namespace {

using namespace std::chrono_literals;

// How a receiver of a closed channel receives.
enum class ReceiveKind { receive, try_receive, receive_until, select };

const char* to_string(ReceiveKind k) {
  switch (k) {
    case ReceiveKind::receive:
      return "receive";
    case ReceiveKind::try_receive:
      return "try_receive";
    case ReceiveKind::receive_until:
      return "receive_until";
    case ReceiveKind::select:
      return "select";
  }
  return "?";
}

struct CloseCase {
  int capacity = 1;
  int senders = 0;  // values 0..senders-1, sent in order; those past the capacity wait for room
  std::vector<ReceiveKind> receivers;
  StrategyValue strategy;
};

void showValue(const CloseCase& c, std::ostream& os) {
  os << "CloseCase{capacity=" << c.capacity << ", senders=" << c.senders << ", receivers=[";
  for (std::size_t i = 0; i < c.receivers.size(); ++i) {
    os << (i == 0 ? "" : ", ") << to_string(c.receivers[i]);
  }
  os << "], strategy=";
  showValue(c.strategy, os);
  os << "}";
}

rc::Gen<CloseCase> close_case() {
  return rc::gen::exec([] {
    CloseCase c;
    c.capacity = *rc::gen::inRange(1, 5);
    c.senders = *rc::gen::inRange(0, c.capacity + 3);
    const auto receivers = static_cast<std::size_t>(*rc::gen::inRange(1, 4));
    c.receivers = *rc::gen::container<std::vector<ReceiveKind>>(
        receivers, rc::gen::element(ReceiveKind::receive, ReceiveKind::try_receive,
                                    ReceiveKind::receive_until, ReceiveKind::select));
    c.strategy = *case_strategy();
    return c;
  });
}

Result<int> receive_one(Runtime& rt, Channel<int>& ch, ReceiveKind kind) {
  switch (kind) {
    case ReceiveKind::receive:
      return ch.receive();
    case ReceiveKind::try_receive:
      return ch.try_receive();
    case ReceiveKind::receive_until:
      return ch.receive_until(rt.now() + 1h);
    case ReceiveKind::select: {
      auto s = bubble::select(recv(ch));
      return s.get<0>();
    }
  }
  return errc::empty;
}

// One select case: a receive or a send on its own channel of capacity 1, ready or not.
struct SelectSlot {
  bool send = false;
  bool ready = true;
};

struct SelectCase {
  std::array<SelectSlot, 4> slots;
  std::uint64_t seed = 1;  // of the random strategy
};

void showValue(const SelectCase& c, std::ostream& os) {
  os << "SelectCase{slots=[";
  for (std::size_t i = 0; i < c.slots.size(); ++i) {
    os << (i == 0 ? "" : ", ") << (c.slots[i].send ? "send" : "recv")
       << (c.slots[i].ready ? " ready" : " blocked");
  }
  os << "], random seed=" << c.seed << "}";
}

rc::Gen<SelectCase> select_case() {
  return rc::gen::exec([] {
    SelectCase c;
    for (SelectSlot& s : c.slots) {
      s.send = *rc::gen::arbitrary<bool>();
      s.ready =
          *rc::gen::weightedOneOf<bool>({{2, rc::gen::just(true)}, {1, rc::gen::just(false)}});
    }
    if (!c.slots[0].ready && !c.slots[1].ready && !c.slots[2].ready && !c.slots[3].ready) {
      c.slots[*rc::gen::inRange(0, 4)].ready = true;
    }
    c.seed = *rc::gen::inRange<std::uint64_t>(1, 1'000'000);
    return c;
  });
}

// The channels of a select case, each set to its slot's state: a ready receive has a value to
// take, a blocked one none; a ready send has room, a blocked one a full buffer.
struct SelectChannels {
  std::array<std::unique_ptr<Channel<int>>, 4> ch;

  SelectChannels(const SelectCase& c, Runtime& rt) {
    for (std::size_t i = 0; i < 4; ++i) ch[i] = std::make_unique<Channel<int>>(1, rt);
    reset(c);
  }
  // Puts every channel back in its slot's state.
  void reset(const SelectCase& c) {
    for (std::size_t i = 0; i < 4; ++i) {
      const bool full = c.slots[i].send ? !c.slots[i].ready : c.slots[i].ready;
      if (full && ch[i]->size() == 0) (void)ch[i]->try_send(100 + static_cast<int>(i));
      if (!full && ch[i]->size() == 1) (void)ch[i]->try_receive();
    }
  }
  Channel<int>* recv_channel(const SelectCase& c, std::size_t i) {
    return c.slots[i].send ? nullptr : ch[i].get();
  }
  Channel<int>* send_channel(const SelectCase& c, std::size_t i) {
    return c.slots[i].send ? ch[i].get() : nullptr;
  }
};

// One select over the case's slots (argument 2i is slot i's receive, 2i + 1 its send; the other
// of the two is absent). Returns the slot chosen, after checking that it was ready, that its
// operation took effect and that no other slot's did.
std::size_t select_once(const SelectCase& c, SelectChannels& s) {
  std::array<std::size_t, 4> before{};
  for (std::size_t i = 0; i < 4; ++i) before[i] = s.ch[i]->size();
  auto r = bubble::select(recv(s.recv_channel(c, 0)), send(s.send_channel(c, 0), 0),
                          recv(s.recv_channel(c, 1)), send(s.send_channel(c, 1), 1),
                          recv(s.recv_channel(c, 2)), send(s.send_channel(c, 2), 2),
                          recv(s.recv_channel(c, 3)), send(s.send_channel(c, 3), 3));
  const std::size_t slot = r.index() / 2;
  if (!c.slots[slot].ready) {
    BUBBLE_FAIL("select chose slot " + std::to_string(slot) + ", which was not ready");
  }
  for (std::size_t i = 0; i < 4; ++i) {
    const std::size_t expected = i != slot ? before[i] : (c.slots[i].send ? 1 : 0);
    if (s.ch[i]->size() != expected) {
      BUBBLE_FAIL("after a select that chose slot " + std::to_string(slot) + ", channel " +
                  std::to_string(i) + " holds " + std::to_string(s.ch[i]->size()) +
                  " values, expected " + std::to_string(expected) +
                  " (exactly the chosen case takes effect)");
    }
  }
  return slot;
}

}  // namespace

void closed_channel_drains_before_closed() {
  const CloseCase c = testing::draw(close_case());
  Options options;
  options.strategy = c.strategy.value;
  options.max_steps = 100'000;
  testing::run_property(options, [&](Runtime& rt) {
    Channel<int> ch("ch", static_cast<std::size_t>(c.capacity), rt);
    const int buffered = std::min(c.senders, c.capacity);
    std::vector<std::error_code> sent(static_cast<std::size_t>(c.senders));
    std::vector<std::unique_ptr<ThreadHandle>> threads;
    for (int i = 0; i < c.senders; ++i) {
      threads.push_back(rt.spawn("sender-" + std::to_string(i),
                                 [&, i] { sent[static_cast<std::size_t>(i)] = ch.send(i); }));
      bubble::wait();  // each send buffers or waits before the next
    }
    std::vector<std::vector<int>> received(c.receivers.size());
    std::vector<std::error_code> last(c.receivers.size());
    auto receiver = [&](std::size_t r) {
      return [&, r] {
        for (;;) {
          Result<int> v = receive_one(rt, ch, c.receivers[r]);
          if (!v) {
            last[r] = v.error();
            return;
          }
          received[r].push_back(*v);
        }
      };
    };
    // With nothing buffered, the receivers wait on the empty channel when it closes.
    const bool receivers_wait = c.senders == 0;
    for (std::size_t r = 0; receivers_wait && r < c.receivers.size(); ++r) {
      if (c.receivers[r] == ReceiveKind::try_receive) continue;  // never waits
      threads.push_back(rt.spawn("receiver-" + std::to_string(r), receiver(r)));
    }
    bubble::wait();
    ch.close();
    bubble::wait();
    // Reported once every thread has been joined: they use `ch`, which must outlive them.
    std::string broken;
    for (int i = 0; i < c.senders && broken.empty(); ++i) {
      const std::error_code expected = i < buffered ? std::error_code{} : errc::closed;
      const std::error_code got = sent[static_cast<std::size_t>(i)];
      if (got != expected) {
        broken = "send of value " + std::to_string(i) + " returned '" + got.message() +
                 "', expected '" + expected.message() + "' (capacity " +
                 std::to_string(c.capacity) + ")";
      }
    }
    for (std::size_t r = 0; !receivers_wait && r < c.receivers.size(); ++r) {
      threads.push_back(rt.spawn("receiver-" + std::to_string(r), receiver(r)));
    }
    for (auto& t : threads) t->join();
    if (!broken.empty()) BUBBLE_FAIL(broken);
    std::vector<int> all;
    for (std::size_t r = 0; r < c.receivers.size(); ++r) {
      if (receivers_wait && c.receivers[r] == ReceiveKind::try_receive) {
        last[r] = ch.try_receive().error();
      }
      if (last[r] != errc::closed) {
        BUBBLE_FAIL(std::string("receiver ") + std::to_string(r) + " (" +
                    to_string(c.receivers[r]) + ") ended with '" + last[r].message() +
                    "', expected 'closed' once the channel was drained");
      }
      for (std::size_t k = 1; k < received[r].size(); ++k) {
        if (received[r][k] < received[r][k - 1]) {
          BUBBLE_FAIL("receiver " + std::to_string(r) + " got " + std::to_string(received[r][k]) +
                      " after " + std::to_string(received[r][k - 1]) + " (first in, first out)");
        }
      }
      all.insert(all.end(), received[r].begin(), received[r].end());
    }
    std::sort(all.begin(), all.end());
    std::vector<int> expected(static_cast<std::size_t>(buffered));
    for (int i = 0; i < buffered; ++i) expected[static_cast<std::size_t>(i)] = i;
    if (all != expected) {
      BUBBLE_FAIL("the receivers of the closed channel got " + std::to_string(all.size()) +
                  " values, expected each of the " + std::to_string(buffered) +
                  " buffered values exactly once");
    }
  });
}

void select_chooses_among_ready_cases() {
  const SelectCase c = testing::draw(select_case());
  std::size_t first_ready = 0;
  while (!c.slots[first_ready].ready) ++first_ready;
  std::size_t ready = 0;
  for (const SelectSlot& s : c.slots) ready += s.ready ? 1 : 0;
  // Under fifo: the first ready case in argument order.
  testing::run_property({.strategy = Strategy::fifo()}, [&](Runtime& rt) {
    SelectChannels s(c, rt);
    const std::size_t slot = select_once(c, s);
    if (slot != first_ready) {
      BUBBLE_FAIL("under fifo, select chose slot " + std::to_string(slot) +
                  ", not the first ready one, " + std::to_string(first_ready));
    }
  });
  // Under random: each ready case about equally often.
  constexpr int kSelects = 200;
  testing::run_property({.strategy = Strategy::random(c.seed)}, [&](Runtime& rt) {
    SelectChannels s(c, rt);
    std::array<int, 4> chosen{};
    for (int k = 0; k < kSelects; ++k) {
      ++chosen[select_once(c, s)];
      s.reset(c);
    }
    const double fair = static_cast<double>(kSelects) / static_cast<double>(ready);
    for (std::size_t i = 0; i < 4; ++i) {
      if (!c.slots[i].ready) continue;
      if (chosen[i] < fair / 3 || chosen[i] > fair * 5 / 3) {
        BUBBLE_FAIL("under random, select chose ready slot " + std::to_string(i) + " " +
                    std::to_string(chosen[i]) + " times in " + std::to_string(kSelects) +
                    " selects with " + std::to_string(ready) + " ready cases (uniform: about " +
                    std::to_string(static_cast<int>(fair)) + ")");
      }
    }
  });
}

}  // namespace bubble::scenarios
