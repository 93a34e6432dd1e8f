#!/usr/bin/env python3
"""Fails when a function in the checked folders is longer than LIMIT lines,
counted from the first line of its declaration (template clause and return
type included) through its closing brace, as an editor shows it. Lambdas and
local classes count as part of the function they are written in.

The folders checked are FOLDERS below: the one list to extend when a layer
has been brought under the limit. Each long function is printed as
`file:line: NAME is N lines (limit 60)`; the exit code is 1 if there is
any, or if a file cannot be read as C++ (unbalanced braces).

It reads C++ with a scanner, not a compiler: comments, string and character
literals (raw strings too) and preprocessor lines are blanked first, then
braces are matched and each `{` at namespace or class scope is classified
from the tokens since the previous declaration: a namespace, a class, an
enum or an initializer (which are entered, not counted), or a function
body (a parameter list, no `=` outside it; a constructor's member
initializers `m_{x}` are skipped). It checks itself on C++ snippets before
each run (self_test), so a change that breaks the scanner fails the test.

usage: check_function_length.py [SOURCE_DIR] [--folders A,B,...]   (ctest: `function_length`)
       --folders checks those folders instead of FOLDERS (to see where one stands).
"""
import pathlib
import re
import sys

LIMIT = 60
# The folders held to LIMIT, relative to the source directory: the one
# list to extend. experiment/ and parallel/ join it once their functions
# are under the limit (`--folders experiment,parallel` shows where they stand).
FOLDERS = ["apps", "parallel"]

TOKEN = re.compile(r"\"\"|[A-Za-z_]\w*|\d[\w.']*|::|->|==|!=|<=|>=|&&|\|\||<<|\S")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "decltype", "alignas", "static_assert",
            "noexcept", "catch", "requires"}


def blank(text):
    """`text` with comments, literals and preprocessor lines replaced by
    spaces (a string by `""`), newlines kept so that lines still count."""
    out, i, n = [], 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#" or (at_line_start and c in " \t" and text[i:].lstrip(" \t").startswith("#")):
            j = i
            while True:  # the directive, with its continuation lines
                k = text.find("\n", j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] != "\\":
                    break
                out.append("\n")
                j = k + 1
            i = k
            continue
        at_line_start = c == "\n" or (at_line_start and c in " \t")
        if text.startswith("//", i):
            k = text.find("\n", i)
            i = n if k < 0 else k
        elif text.startswith("/*", i):
            k = text.find("*/", i + 2)
            k = n if k < 0 else k + 2
            out.append("\n" * text.count("\n", i, k))
            i = k
        elif m := re.match(r'(?:u8|[uUL])?R"([^(\s]*)\(', text[i:i + 24]):
            end = text.find(")" + m.group(1) + '"', i)
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):  # not 1'000
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append('""' if c == '"' else "0")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def tokens(text):
    """(token, line) pairs of blanked text."""
    out = []
    for line_no, line in enumerate(text.split("\n"), 1):
        out.extend((t, line_no) for t in TOKEN.findall(line))
    return out


def strip_template(head):
    """`head` without its leading `template <...>` clauses and [[attributes]]."""
    while head:
        if head[0][0] == "template" and len(head) > 1 and head[1][0] == "<":
            angle, paren, i = 0, 0, 1
            while i < len(head):
                t = head[i][0]
                paren += {"(": 1, ")": -1}.get(t, 0)
                if paren == 0:
                    angle += {"<": 1, ">": -1}.get(t, 0)
                i += 1
                if angle <= 0 and paren == 0:
                    break
            head = head[i:]
        elif head[0][0] == "[" and len(head) > 1 and head[1][0] == "[":
            i = next((k for k in range(2, len(head) - 1) if head[k][0] == "]" and head[k + 1][0] == "]"),
                     len(head) - 2)
            head = head[i + 2:]
        else:
            return head
    return head


def depth0(head):
    """Indices of the tokens of `head` outside any parentheses or brackets."""
    depth, out = 0, []
    for i, (t, _) in enumerate(head):
        if t in "([":
            depth += 1
        elif t in ")]":
            depth -= 1
        elif depth == 0:
            out.append(i)
    return out


def classify(head):
    """What a `{` after the declaration tokens `head` opens: 'scope'
    (namespace, class, extern "C"), 'function', 'member' (a constructor's
    member initializer) or 'other' (an enum, an initializer)."""
    decl = strip_template(head)
    words = [t for t, _ in decl]
    if not words or "namespace" in words[:2] or words[:2] == ["extern", '""']:
        return "scope" if words else "other"
    if words[0] in ("class", "struct", "union") or words[:2] in (["typedef", "struct"], ["typedef", "class"]):
        return "scope"
    if "enum" in words[:2]:
        return "other"
    top = depth0(decl)
    if any(words[i] == "=" for i in top):
        return "other"
    opens = [i for i, (t, _) in enumerate(decl) if t == "(" and (i - 1 in top or i == 0)]
    if not opens or opens[0] == 0:
        return "other"
    before = words[opens[0] - 1]
    named = before[0].isalpha() or before[0] == "_" or before == ">"
    operator = "operator" in (before, words[opens[0] - 2] if opens[0] >= 2 else "")
    if before in KEYWORDS or not (named or operator):
        return "other"
    # A constructor's member initializer: `) : a_(x), b_{y} {` — a brace after a name.
    close = opens[0]
    depth = 0
    for close in range(opens[0], len(decl)):
        depth += {"(": 1, ")": -1}.get(words[close], 0)
        if depth == 0:
            break
    if any(words[i] == ":" for i in top if i > close) and words[-1] not in (")", "}"):
        return "member"
    return "function"


def function_name(head):
    decl = strip_template(head)
    words = [t for t, _ in decl]
    i = words.index("(")
    if i >= 2 and words[i - 2] == "operator":
        return "operator" + words[i - 1]
    if i >= 1 and words[i - 1] == "operator":
        return "operator()"
    j = i - 1
    while j >= 2 and words[j - 1] == "::" or (j >= 1 and words[j - 1] == "~"):
        j -= 2 if words[j - 1] == "::" else 1
    return "".join(words[j:i])


def functions(text):
    """(name, first line, last line) of each function defined at namespace
    or class scope in C++ source `text`. Raises ValueError on unbalanced braces."""
    toks = tokens(blank(text))
    found = []
    # Each open brace: (kind, index of its `{`, head) ; kinds as classify() says.
    stack = [("scope", -1, None)]
    start = 0  # the current declaration's first token, at scope level
    paren = 0
    for i, (t, line) in enumerate(toks):
        kind = stack[-1][0]
        if kind != "scope":
            if t == "{":
                stack.append(("other", i, None))
            elif t == "}":
                done = stack.pop()
                if done[0] == "function":
                    found.append((function_name(done[2]), done[2][0][1], line))
                    start = i + 1
                elif done[0] == "member":
                    pass  # the declaration goes on to the body
                if not stack:
                    raise ValueError(f"line {line}: '}}' without its '{{'")
            continue
        if t in "([":
            paren += 1
        elif t in ")]":
            paren -= 1
        elif t == ";" and paren == 0:
            start = i + 1
        elif t == ":" and paren == 0 and i - start == 1 and toks[start][0] in ("public", "private", "protected"):
            start = i + 1
        elif t == "{":
            if paren > 0:
                stack.append(("other", i, None))
                continue
            head = toks[start:i]
            what = classify(head)
            stack.append((what, i, head))
            if what == "scope":
                start = i + 1
        elif t == "}":
            stack.pop()
            if not stack:
                raise ValueError(f"line {line}: '}}' without its '{{'")
            start = i + 1
    if len(stack) != 1:
        raise ValueError(f"a '{{' at line {toks[stack[-1][1]][1]} is never closed")
    return found


def self_test():
    """The scanner on snippets whose functions are known; a list of failures."""
    src = r'''
#include <x>
#define LONG_MACRO(a) \
  { a; }
namespace a::b {
namespace {
constexpr auto kTable = [] {
  int t{};
  return t;
}();
struct S : Base<int> {
  S(int x) : x_(x), y_{x, "}"}, z_() {
    go();
  }
  bool operator()(int) const { return true; }
  bool operator==(const S&) const = default;
 public:
  ~S() {}
  int x_, y_{'{'}, z_;
};
enum class E : int { one, two };
template <typename T = int, int N = (1 > 2)>
std::vector<T>
make(T t = T{}) {
  auto f = [&](int q) {
    if (q) { return R"x(})x"; }
    return "{";
  };
  /* } */ // }
  return {t};
}
}  // namespace
auto trailing(int a) -> decltype(a) { return a; }
extern "C" {
int c_function(void) { return 1; }
}
const std::function<void()> g = [] { call(); };
}  // namespace a::b
'''
    want = [("kTable", None, None), ("S", 12, 14), ("operator()", 15, 15), ("~S", 18, 18),
            ("make", 22, 31), ("trailing", 33, 33), ("c_function", 35, 35)]
    got = functions(src)
    fails = []
    expect = [(n, a, b) for n, a, b in want if a is not None]
    if got != expect:
        fails.append(f"self-test: found {got}, expected {expect}")
    long = "int f(int x) {\n" + "  x++;\n" * 59 + "}\n"  # 61 lines
    if [last - first + 1 for _, first, last in functions(long)] != [61]:
        fails.append("self-test: a 61-line function was not measured as 61 lines")
    try:
        functions("void f() {\n")
        fails.append("self-test: an unclosed brace was not reported")
    except ValueError:
        pass
    return fails


def main():
    args = sys.argv[1:]
    folders = FOLDERS
    if "--folders" in args:
        i = args.index("--folders")
        folders = args[i + 1].split(",") if i + 1 < len(args) else []
        del args[i:i + 2]
    root = pathlib.Path(args[0] if args else pathlib.Path(__file__).resolve().parent.parent)
    bad = self_test()
    files = 0
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".hpp", ".cpp", ".h"):
                continue
            files += 1
            rel = path.relative_to(root)
            try:
                found = functions(path.read_text())
            except ValueError as e:
                bad.append(f"{rel}: cannot read as C++: {e}")
                continue
            for name, first, last in found:
                if last - first + 1 > LIMIT:
                    bad.append(f"{rel}:{first}: {name} is {last - first + 1} lines (limit {LIMIT})")
    for b in bad:
        print(b)
    if files == 0:
        print(f"no sources under {root} in {', '.join(folders)}")
        return 1
    print(f"{files} files in {', '.join(folders)}: {len(bad)} functions over {LIMIT} lines or problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
