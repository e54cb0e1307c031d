// A small result table rendered as aligned text, CSV, JSON or Markdown
// (the --format of `onnxmini profile summary|compare`).
#pragma once
#include <string>
#include <vector>

namespace onnxmini {
namespace profile {

enum class Format { Text, Csv, Json, Markdown };
Format format_from_string(const std::string& s);  // throws InvalidArgument

struct Table {
  std::vector<std::string> columns;
  std::vector<bool> numeric;  // per column: right-aligned, a JSON number (empty cell: null)
  std::vector<std::vector<std::string>> rows;

  void add_column(const std::string& name, bool is_numeric) {
    columns.push_back(name);
    numeric.push_back(is_numeric);
  }
  // `title` lines precede the text and Markdown forms; CSV and JSON carry only the rows.
  std::string render(Format format, const std::vector<std::string>& title = {}) const;
};

}  // namespace profile
}  // namespace onnxmini
