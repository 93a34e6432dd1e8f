// The one codec of what crosses MPI ranks (parallel/, docs/parallel.md): a
// message type lists its fields once, and that list both writes and reads
// it, so a field cannot be packed and forgotten on the way back. Values go
// as they are in memory (every rank is the same build on the same kind of
// machine); a string, a vector or a map goes as its length, then its
// elements.
//
// A message type is a struct with
//   static constexpr auto fields() { return std::tuple{&T::a, &T::b}; }
// or, for a type of a lower layer that should not know the codec, a
// specialisation of codec::Fields<T> with the same function. Fields may be
// integers, enums, bools, Time, strings, string views (read back as views
// into the message), vectors, maps, optionals, variants of message types
// (an index byte, then the alternative) and other message types. An
// aggregate's list must name every member (a static_assert counts them).
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/units.hpp"

namespace rdmasim::codec {

template <typename T>
struct Fields;  // specialise: static constexpr auto fields()

namespace detail {

template <typename T>
concept OwnFields = requires {
  T::fields();
};
template <typename T>
concept OuterFields = requires {
  Fields<T>::fields();
};

template <typename T>
constexpr auto fields_of() {
  if constexpr (OwnFields<T>)
    return T::fields();
  else
    return Fields<T>::fields();
}

template <typename T>
struct is_vector : std::false_type {};
template <typename T, typename A>
struct is_vector<std::vector<T, A>> : std::true_type {};
template <typename T>
struct is_map : std::false_type {};
template <typename K, typename V, typename C, typename A>
struct is_map<std::map<K, V, C, A>> : std::true_type {};
template <typename T>
struct is_pair : std::false_type {};
template <typename A, typename B>
struct is_pair<std::pair<A, B>> : std::true_type {};
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
template <typename T>
struct is_variant : std::false_type {};
template <typename... T>
struct is_variant<std::variant<T...>> : std::true_type {};

// Converts to anything: counts an aggregate's members (what `T{a, b, ...}`
// accepts) to check a field list against them.
struct Any {
  template <typename U>
  operator U() const;  // NOLINT: only in unevaluated contexts
};
template <typename T, typename... A>
constexpr size_t members() {
  if constexpr (requires { T{A{}..., Any{}}; })
    return members<T, A..., Any>();
  else
    return sizeof...(A);
}

template <typename T>
constexpr void check_complete() {
  if constexpr (std::is_aggregate_v<T>)
    static_assert(members<T>() == std::tuple_size_v<decltype(fields_of<T>())>,
                  "a message type's field list must name every member");
}

}  // namespace detail

template <typename T>
concept Message = detail::OwnFields<T> || detail::OuterFields<T>;

// Appends values to a string.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  template <typename T>
  Writer& put(const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      out_.push_back(v ? 1 : 0);
    } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      raw(&v, sizeof v);
    } else if constexpr (std::is_same_v<T, Time>) {
      put(v.count());
    } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view>) {
      length(v.size());
      raw(v.data(), v.size());
    } else if constexpr (detail::is_vector<T>::value) {
      length(v.size());
      using E = typename T::value_type;
      if constexpr (std::is_arithmetic_v<E> && !std::is_same_v<E, bool>)
        raw(v.data(), v.size() * sizeof(E));
      else
        for (const E& e : v) put(e);
    } else if constexpr (detail::is_map<T>::value) {
      length(v.size());
      for (const auto& [k, x] : v) put(k).put(x);
    } else if constexpr (detail::is_pair<T>::value) {
      put(v.first).put(v.second);
    } else if constexpr (detail::is_optional<T>::value) {
      put(v.has_value());
      if (v) put(*v);
    } else if constexpr (detail::is_variant<T>::value) {
      put(static_cast<uint8_t>(v.index()));
      std::visit([this](const auto& x) { put(x); }, v);
    } else {
      static_assert(Message<T>, "no codec for this type: give it fields()");
      detail::check_complete<T>();
      std::apply([&](auto... m) { (put(v.*m), ...); }, detail::fields_of<T>());
    }
    return *this;
  }

 private:
  void raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  void length(size_t n) { put(static_cast<uint64_t>(n)); }
  std::string& out_;
};

// Reads values from a message; std::runtime_error on one that is
// truncated or malformed. Views it returns point into the message.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool done() const { return at_ == in_.size(); }

  template <typename T>
  T get() {
    T v{};
    get(v);
    return v;
  }

  template <typename T>
  Reader& get(T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      const auto b = get<uint8_t>();
      if (b > 1) fail("a malformed bool");
      v = b != 0;
    } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      std::memcpy(&v, take(sizeof v).data(), sizeof v);
    } else if constexpr (std::is_same_v<T, Time>) {
      v = Time::ps(get<int64_t>());
    } else if constexpr (std::is_same_v<T, std::string_view>) {
      v = take(length(1));
    } else if constexpr (std::is_same_v<T, std::string>) {
      v = std::string(take(length(1)));
    } else if constexpr (detail::is_vector<T>::value) {
      using E = typename T::value_type;
      const size_t n = length(std::is_arithmetic_v<E> ? sizeof(E) : 1);
      v.clear();
      if constexpr (std::is_arithmetic_v<E> && !std::is_same_v<E, bool>) {
        v.resize(n);
        if (n > 0) std::memcpy(v.data(), take(n * sizeof(E)).data(), n * sizeof(E));
      } else {
        v.reserve(n);
        for (size_t i = 0; i < n; ++i) get(v.emplace_back());
      }
    } else if constexpr (detail::is_map<T>::value) {
      const size_t n = length(1);
      v.clear();
      for (size_t i = 0; i < n; ++i) {
        auto k = get<typename T::key_type>();
        get(v[std::move(k)]);
      }
    } else if constexpr (detail::is_pair<T>::value) {
      get(v.first).get(v.second);
    } else if constexpr (detail::is_optional<T>::value) {
      if (get<bool>())
        get(v.emplace());
      else
        v.reset();
    } else if constexpr (detail::is_variant<T>::value) {
      alternative<T>(get<uint8_t>(), v, std::make_index_sequence<std::variant_size_v<T>>{});
    } else {
      static_assert(Message<T>, "no codec for this type: give it fields()");
      std::apply([&](auto... m) { (get(v.*m), ...); }, detail::fields_of<T>());
    }
    return *this;
  }

 private:
  [[noreturn]] static void fail(const char* what) {
    throw std::runtime_error(std::string("parallel: ") + what);
  }
  std::string_view take(size_t n) {
    if (n > in_.size() - at_) fail("a truncated message");
    const std::string_view s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  // A length whose elements take at least `each` bytes: one the rest of
  // the message cannot hold is refused before anything is allocated.
  size_t length(size_t each) {
    const auto n = get<uint64_t>();
    if (n > (in_.size() - at_) / each) fail("a truncated message");
    return static_cast<size_t>(n);
  }
  template <typename V, size_t... I>
  void alternative(uint8_t index, V& v, std::index_sequence<I...>) {
    if (index >= sizeof...(I)) fail("a message of unknown kind");
    ((index == I ? (void)get(v.template emplace<I>()) : (void)0), ...);
  }

  std::string_view in_;
  size_t at_ = 0;
};

// A whole message.
template <typename T>
std::string encode(const T& v) {
  std::string out;
  Writer(out).put(v);
  return out;
}

// What encode(v) wrote: the message must hold that and nothing more.
template <typename T>
T decode(std::string_view in) {
  Reader r(in);
  T v = r.get<T>();
  if (!r.done()) throw std::runtime_error("parallel: a message longer than its fields");
  return v;
}

}  // namespace rdmasim::codec
