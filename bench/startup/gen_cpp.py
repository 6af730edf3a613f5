#!/usr/bin/env python3
"""gen_cpp.py DIR UNITS TYPES: writes a large, STL-heavy C++ program for bench/startup/run.sh.

DIR/unit<U>.cpp (U < UNITS) each define TYPES record types with an index built from std::map,
std::unordered_map, std::shared_ptr, std::function, std::sort and std::ostringstream, so the
binary has a lot of template code and, with -g, a lot of DWARF (about 13 MB for 2 x 20 types);
DIR/main.cpp calls them all. A file is rewritten only when its text changes, so its timestamp
says when the program last changed.
"""
import os
import sys

RECORD = """struct Record%(t)d {
  int id;
  double weight;
  std::string name;
  std::vector<int> tags;
  bool operator<(const Record%(t)d &o) const {
    return weight < o.weight || (weight == o.weight && id < o.id);
  }
};
struct Index%(t)d {
  std::map<std::string, std::vector<Record%(t)d>> by_name;
  std::unordered_map<int, std::shared_ptr<Record%(t)d>> by_id;
  std::function<double(const Record%(t)d &)> score = [](const Record%(t)d &r) {
    return r.weight * %(t)d;
  };
  void add(const Record%(t)d &r) {
    by_name[r.name].push_back(r);
    by_id[r.id] = std::make_shared<Record%(t)d>(r);
  }
  double best() const {
    std::vector<Record%(t)d> all;
    for (auto &kv : by_name)
      all.insert(all.end(), kv.second.begin(), kv.second.end());
    std::sort(all.begin(), all.end());
    std::ostringstream os;
    for (auto &r : all)
      os << r.name << r.id;
    return all.empty() ? 0 : score(all.back()) + (double)os.str().size();
  }
};
double run%(t)d(int n) {
  Index%(t)d index;
  for (int i = 0; i < n; ++i)
    index.add(Record%(t)d{i, (i * 37 %% 101) / 7.0, "r" + std::to_string(i %% 13), {i, i + 1}});
  return index.best();
}
"""


def write_if_changed(path, text):
    if os.path.exists(path) and open(path).read() == text:
        return
    with open(path, "w") as f:
        f.write(text)


def main():
    if len(sys.argv) != 4 or not sys.argv[2].isdigit() or not sys.argv[3].isdigit():
        sys.exit("usage: gen_cpp.py DIR UNITS TYPES")
    out, units, types = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    includes = "".join("#include <%s>\n" % h for h in (
        "algorithm", "functional", "map", "memory", "sstream", "string", "unordered_map", "vector"))
    for u in range(units):
        text = includes + "\nnamespace unit%d {\n" % u
        text += "".join(RECORD % {"t": t} for t in range(types))
        text += "double run_all(int n) {\n  double s = 0;\n"
        text += "".join("  s += run%d(n);\n" % t for t in range(types))
        text += "  return s;\n}\n} // namespace unit%d\n" % u
        write_if_changed(os.path.join(out, "unit%d.cpp" % u), text)
    text = "#include <cstdio>\n"
    text += "".join("namespace unit%d {\ndouble run_all(int n);\n}\n" % u for u in range(units))
    text += "int main(int argc, char **) {\n  double s = 0;\n"
    text += "".join("  s += unit%d::run_all(argc * 10);\n" % u for u in range(units))
    text += '  std::printf("%g\\n", s);\n  return 0;\n}\n'
    write_if_changed(os.path.join(out, "main.cpp"), text)
    print("\n".join([os.path.join(out, "main.cpp")] +
                    [os.path.join(out, "unit%d.cpp" % u) for u in range(units)]))


if __name__ == "__main__":
    main()
