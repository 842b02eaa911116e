// polyglot answer key (utils/languages/cpp_key.py): written before a rewritten hidden test.
// observe(id, value) writes `id TAB test-name TAB rendering` to the descriptor the runner names
// in POLYGLOT_OBSERVATIONS_FD. A value renders by its value alone (never through the solution's
// operator<< or operator==): integers in decimal (an int and a long alike), chars as char:N,
// strings quoted and escaped, any iterable as [a,b] (a vector and a list alike), maps as {k:v},
// unordered containers sorted, pair/tuple as (a,b), optional as none/some(x), a calendar date
// (anything with year(), month(), day(): boost's gregorian::date) as date:Y-M-D, a point in time
// (date() and time_of_day().ticks(): boost's posix_time::ptime) as time:Y-M-D+ticks. An enum is
// observed with observe_enum, against the enumerators the test names, by underlying value.
// Anything else (floating point, classes) fails to compile: such assertions stay in-process.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
std::string polyglot_key_test_name();
void polyglot_key_observed();  // a passing Catch assertion: a test case with none is not in the JUnit report
namespace polyglot_key {
template <class T> struct is_pair : std::false_type {};
template <class A, class B> struct is_pair<std::pair<A, B>> : std::true_type {};
template <class T> struct is_tuple : std::false_type {};
template <class... A> struct is_tuple<std::tuple<A...>> : std::true_type {};
template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};
template <class T, class = void> struct is_iterable : std::false_type {};
template <class T> struct is_iterable<T, std::void_t<decltype(std::begin(std::declval<const T&>())),
                                                     decltype(std::end(std::declval<const T&>()))>> : std::true_type {};
template <class T, class = void> struct is_map : std::false_type {};
template <class T> struct is_map<T, std::void_t<typename T::key_type, typename T::mapped_type>> : std::true_type {};
template <class T, class = void> struct is_unordered : std::false_type {};
template <class T> struct is_unordered<T, std::void_t<typename T::hasher>> : std::true_type {};
template <class T> struct always_false : std::false_type {};
template <class T> struct is_text : std::bool_constant<std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view> ||
    std::is_same_v<T, const char*> || std::is_same_v<T, char*> ||
    (std::is_array_v<T> && std::is_same_v<std::remove_cv_t<std::remove_extent_t<T>>, char>)> {};

// What render() can render, decided per call site (observe<__LINE__>): a refused type is a
// compile error at each line that observes it, which preparation puts back in-process.
template <class T, class = void> struct observable_type
    : std::bool_constant<std::is_integral_v<T> || std::is_enum_v<T> || is_text<T>::value> {};
template <class T> constexpr bool observable = observable_type<std::remove_cv_t<std::remove_reference_t<T>>>::value;
template <class A, class B> struct observable_type<std::pair<A, B>> : std::bool_constant<observable<A> && observable<B>> {};
template <class... A> struct observable_type<std::tuple<A...>> : std::bool_constant<(observable<A> && ...)> {};
template <class T> struct observable_type<std::optional<T>> : std::bool_constant<observable<T>> {};
// A calendar date and a point in time, read through their fields (boost::gregorian::date,
// boost::posix_time::ptime, or a solution's own type with the same accessors): never through
// the type's operator== or operator<<. A special value (not_a_date_time, infinities) renders
// by its kind alone.
template <class T, class = void> struct is_date : std::false_type {};
template <class T> struct is_date<T, std::void_t<decltype(static_cast<long long>(std::declval<const T&>().year())),
                                                decltype(static_cast<long long>(std::declval<const T&>().month())),
                                                decltype(static_cast<long long>(std::declval<const T&>().day()))>>
    : std::true_type {};
template <class T, class = void> struct is_time : std::false_type {};
template <class T> struct is_time<T, std::void_t<decltype(std::declval<const T&>().date()),
                                                decltype(static_cast<long long>(std::declval<const T&>().time_of_day().ticks()))>>
    : std::bool_constant<is_date<std::remove_cv_t<std::remove_reference_t<decltype(std::declval<const T&>().date())>>>::value> {};
template <class T, class = void> struct has_is_special : std::false_type {};
template <class T> struct has_is_special<T, std::void_t<decltype(static_cast<bool>(std::declval<const T&>().is_special()))>>
    : std::true_type {};
template <class T> struct observable_type<T, std::enable_if_t<is_date<T>::value || is_time<T>::value>> : std::true_type {};

template <class T, class = void> struct is_iterable_class : std::false_type {};
template <class T> struct is_iterable_class<T, std::void_t<decltype(std::begin(std::declval<const T&>())),
                                                           decltype(std::end(std::declval<const T&>()))>>
    : std::bool_constant<std::is_class_v<T> && !is_text<T>::value> {};
template <class T> struct observable_type<T, std::enable_if_t<is_iterable_class<T>::value && !is_date<T>::value &&
                                                               !is_time<T>::value>>
    : std::bool_constant<observable<decltype(*std::begin(std::declval<const T&>()))>> {};

inline std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') { out += '\\'; out += static_cast<char>(c); }
    else if (c < 0x20 || c >= 0x7f) { char hex[8]; std::snprintf(hex, sizeof hex, "\\x%02x", c); out += hex; }
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

template <class T> std::string render(const T& value);

template <class E> struct Named { const char* name; long long value; };
// The enumerators the current observe_enum call names, per enum type (null: none named).
template <class E> inline const std::initializer_list<Named<E>>* enumerators_of = nullptr;

template <class E> std::string render_enum(E value) {
  long long underlying = static_cast<long long>(static_cast<std::underlying_type_t<E>>(value));
  if (enumerators_of<E> != nullptr)
    for (const auto& enumerator : *enumerators_of<E>)
      if (enumerator.value == underlying) return std::string("enum:") + enumerator.name;
  return "enum:?" + std::to_string(underlying);
}

template <class T> bool special(const T& value) {
  if constexpr (has_is_special<T>::value) return static_cast<bool>(value.is_special());
  else return false;
}

template <class T> std::string render_date(const T& value) {
  if (special(value)) return "date:special";
  return "date:" + std::to_string(static_cast<long long>(value.year())) + "-" +
         std::to_string(static_cast<long long>(value.month())) + "-" + std::to_string(static_cast<long long>(value.day()));
}

template <class T> std::string render_time(const T& value) {
  if (special(value)) return "time:special";
  return "time:" + render_date(value.date()).substr(5) + "+" +
         std::to_string(static_cast<long long>(value.time_of_day().ticks()));
}

template <class Tuple, std::size_t... I> std::string render_tuple(const Tuple& value, std::index_sequence<I...>) {
  std::vector<std::string> parts{render(std::get<I>(value))...};
  std::string out = "(";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "," : "") + parts[i];
  return out + ")";
}

template <class T> std::string render_range(const T& value) {
  std::vector<std::string> parts;
  for (const auto& element : value) {
    if constexpr (is_map<T>::value) parts.push_back(render(element.first) + ":" + render(element.second));
    else parts.push_back(render(element));
  }
  if constexpr (is_unordered<T>::value) std::sort(parts.begin(), parts.end());
  std::string out = is_map<T>::value ? "{" : "[";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "," : "") + parts[i];
  return out + (is_map<T>::value ? "}" : "]");
}

template <class T> std::string render(const T& value) {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) return value ? "true" : "false";
  else if constexpr (std::is_same_v<U, char> || std::is_same_v<U, signed char> || std::is_same_v<U, unsigned char>)
    return "char:" + std::to_string(static_cast<int>(value));
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U>) return std::to_string(static_cast<long long>(value));
  else if constexpr (std::is_integral_v<U>) return std::to_string(static_cast<unsigned long long>(value));
  else if constexpr (std::is_enum_v<U>) return render_enum(value);
  else if constexpr (std::is_same_v<U, const char*> || std::is_same_v<U, char*>) return quoted(value);
  else if constexpr (std::is_array_v<U> && std::is_same_v<std::remove_cv_t<std::remove_extent_t<U>>, char>)
    return quoted(value);
  else if constexpr (std::is_convertible_v<const U&, std::string_view> && std::is_class_v<U> &&
                     (std::is_same_v<U, std::string> || std::is_same_v<U, std::string_view>))
    return quoted(std::string_view(value));
  else if constexpr (is_pair<U>::value) return "(" + render(value.first) + "," + render(value.second) + ")";
  else if constexpr (is_tuple<U>::value) return render_tuple(value, std::make_index_sequence<std::tuple_size_v<U>>{});
  else if constexpr (is_optional<U>::value) return value ? "some(" + render(*value) + ")" : std::string("none");
  else if constexpr (is_time<U>::value) return render_time(value);
  else if constexpr (is_date<U>::value) return render_date(value);
  else if constexpr (is_iterable<U>::value && std::is_class_v<U>) return render_range(value);
  else static_assert(always_false<U>::value, "polyglot_key: this type is not observable (kept in-process)");
}

inline void emit(const char* id, const std::string& text) {
  static const int fd = [] {
    const char* named = std::getenv("POLYGLOT_OBSERVATIONS_FD");
    return named ? std::atoi(named) : -1;
  }();
  if (fd < 0) return polyglot_key_observed();
  std::string line = std::string(id) + "\t" + quoted(polyglot_key_test_name()) + "\t" + text + "\n";
  dprintf(fd, "%s", line.c_str());
  polyglot_key_observed();
}

template <int Line, class T> void observe(const char* id, const T& value) {
  if constexpr (observable<T> && !std::is_enum_v<T>) emit(id, render(value));
  else static_assert(always_false<T>::value, "polyglot_key: this type is not observable (kept in-process)");
}

template <int Line, class E> Named<E> named(const char* name, E value) {
  if constexpr (std::is_enum_v<E>) return Named<E>{name, static_cast<long long>(static_cast<std::underlying_type_t<E>>(value))};
  else static_assert(always_false<E>::value, "polyglot_key: a named constant that is not an enumerator (kept in-process)");
}

// An enum, or a container of them: each enum value rendered as the name of the enumerator the
// test names with the same underlying value.
template <int Line, class T, class E>
void observe_enum(const char* id, const T& value, std::initializer_list<Named<E>> enumerators) {
  if constexpr (observable<T>) {
    enumerators_of<E> = &enumerators;
    std::string text = render(value);
    enumerators_of<E> = nullptr;
    emit(id, text);
  } else {
    static_assert(always_false<T>::value, "polyglot_key: this type is not observable (kept in-process)");
  }
}
}  // namespace polyglot_key
