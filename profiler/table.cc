#include "onnxmini/profile.h"

#include <fmt/format.h>

#include <algorithm>

#include "onnxmini/error.h"

namespace onnxmini {
namespace profile {

Format format_from_string(const std::string& s) {
  if (s == "text") return Format::Text;
  if (s == "csv") return Format::Csv;
  if (s == "json") return Format::Json;
  if (s == "markdown" || s == "md") return Format::Markdown;
  throw Error(ErrorCode::InvalidArgument, "unknown format '" + s + "' (expected text, csv, json or markdown)");
}

namespace {

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

// Markdown cells may not hold '|' or line breaks.
std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

}  // namespace

std::string Table::render(Format format, const std::vector<std::string>& title) const {
  std::string out;
  const size_t n = columns.size();
  switch (format) {
    case Format::Csv: {
      for (size_t c = 0; c < n; ++c) out += (c ? "," : "") + csv_cell(columns[c]);
      out += "\n";
      for (const auto& r : rows) {
        for (size_t c = 0; c < n; ++c) out += (c ? "," : "") + csv_cell(r[c]);
        out += "\n";
      }
      return out;
    }
    case Format::Json: {
      out = "[";
      for (size_t i = 0; i < rows.size(); ++i) {
        out += i ? ",\n{" : "\n{";
        for (size_t c = 0; c < n; ++c) {
          const std::string& v = rows[i][c];
          out += (c ? ", " : "") + json_string(columns[c]) + ": " +
                 (numeric[c] ? (v.empty() ? std::string("null") : v) : json_string(v));
        }
        out += "}";
      }
      return out + "\n]\n";
    }
    case Format::Markdown: {
      for (const auto& t : title) out += t + "\n\n";
      out += "|";
      for (size_t c = 0; c < n; ++c) out += " " + md_cell(columns[c]) + " |";
      out += "\n|";
      for (size_t c = 0; c < n; ++c) out += numeric[c] ? "---:|" : "---|";
      out += "\n";
      for (const auto& r : rows) {
        out += "|";
        for (size_t c = 0; c < n; ++c) out += " " + md_cell(r[c]) + " |";
        out += "\n";
      }
      return out;
    }
    case Format::Text: {
      for (const auto& t : title) out += t + "\n";
      std::vector<size_t> width(n);
      for (size_t c = 0; c < n; ++c) {
        width[c] = columns[c].size();
        for (const auto& r : rows) width[c] = std::max(width[c], md_cell(r[c]).size());
      }
      auto line = [&](const std::vector<std::string>& cells) {
        std::string s;
        for (size_t c = 0; c < n; ++c) {
          const std::string v = md_cell(cells[c]);
          const std::string pad(width[c] - v.size(), ' ');
          s += (c ? "  " : "") + (numeric[c] ? pad + v : v + (c + 1 < n ? pad : ""));
        }
        return s + "\n";
      };
      out += line(columns);
      size_t total = 0;
      for (size_t c = 0; c < n; ++c) total += width[c] + (c ? 2 : 0);
      out += std::string(total, '-') + "\n";
      for (const auto& r : rows) out += line(r);
      return out;
    }
  }
  return out;
}

}  // namespace profile
}  // namespace onnxmini
