// The footer of a Parquet file: the magic, the FileMetaData (schema, row count, column chunks of
// each row group) and the leaf columns of the schema tree. The column chunks' pages are read in
// parquet_pages.cc.
#include "jaxprof/io/parquet.h"

#include <cstring>

#include "jaxprof/common/error.h"
#include "jaxprof/io/thrift_compact.h"

namespace jaxprof {

namespace {

using thrift::CompactReader;

// parquet.thrift enums.
enum Repetition : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };

// Reads a list of structs, calling `element` for each with the reader positioned inside it.
template <typename F>
void read_struct_list(CompactReader& r, uint8_t type, F&& element) {
  if (type != thrift::kList) {
    r.skip(type);
    return;
  }
  uint8_t et;
  uint32_t n;
  r.read_list(et, n);
  for (uint32_t i = 0; i < n; ++i) {
    if (et != thrift::kStruct) {
      r.skip(et);
      continue;
    }
    r.begin_struct();
    element(i);
    r.end_struct();
  }
}

struct SchemaElement {
  int32_t type = -1;  // -1: a group
  int32_t type_length = 0;
  int32_t repetition = kRequired;
  std::string_view name;
  int32_t num_children = 0;
};

// What the reader takes from the FileMetaData.
struct FileMetadata {
  std::vector<SchemaElement> schema;  // depth first, the root (the table) first
  int64_t num_rows = 0;
  std::vector<std::vector<ParquetFile::Chunk>> chunks;  // per column: one chunk per row group
};

// The footer's bytes, after checking the magic at both ends and the footer's length.
std::string_view footer_of(std::string_view bytes, const std::string& name) {
  if (bytes.size() >= 4 && bytes.substr(0, 4) == "PAR1" &&
      (bytes.size() < 12 || bytes.substr(bytes.size() - 4) != "PAR1"))
    // The footer comes last: a file cut short has the magic at its start only.
    throw truncated_input(name, "its Parquet footer (written at the end of the file) is missing",
                          static_cast<int64_t>(bytes.size()), bytes.size());
  if (bytes.size() < 12 || bytes.substr(0, 4) != "PAR1" || bytes.substr(bytes.size() - 4) != "PAR1")
    throw InputError(name, "not a Parquet file (no PAR1 magic at both ends)", 0);
  uint32_t footer_len;
  std::memcpy(&footer_len, bytes.data() + bytes.size() - 8, sizeof footer_len);
  if (footer_len > bytes.size() - 12)
    throw InputError(name, "Parquet footer length exceeds the file",
                     static_cast<int64_t>(bytes.size() - 8));
  return bytes.substr(bytes.size() - 8 - footer_len, footer_len);
}

// The fields of a SchemaElement, the reader inside it.
void read_schema_element(CompactReader& r, SchemaElement& e) {
  int16_t fid;
  uint8_t ft;
  while (r.next_field(fid, ft)) {
    switch (fid) {
      case 1:
        e.type = r.read_i32();
        break;
      case 2:
        e.type_length = r.read_i32();
        break;
      case 3:
        e.repetition = r.read_i32();
        break;
      case 4:
        e.name = r.read_binary();
        break;
      case 5:
        e.num_children = r.read_i32();
        break;
      default:
        r.skip(ft);
    }
  }
}

// The fields of a ColumnMetaData the reader needs, the reader inside it.
void read_column_metadata(CompactReader& r, ParquetFile::Chunk& c) {
  int16_t mid;
  uint8_t mt;
  while (r.next_field(mid, mt)) {
    switch (mid) {
      case 4:
        c.codec = r.read_i32();
        break;
      case 5:
        c.num_values = r.read_i64();
        break;
      case 7:
        c.total_compressed = r.read_i64();
        break;
      case 9:
        c.data_offset = r.read_i64();
        break;
      case 11:
        c.dictionary_offset = r.read_i64();
        break;
      default:
        r.skip(mt);
    }
  }
}

// A ColumnChunk, the reader inside it: its metadata, in this file only.
void read_column_chunk(CompactReader& r, const std::string& name, ParquetFile::Chunk& c) {
  int16_t cid;
  uint8_t ct;
  while (r.next_field(cid, ct)) {
    if (cid == 1 && ct == thrift::kBinary) {
      if (!r.read_binary().empty())
        throw InputError(name, "Parquet columns in other files are not supported");
      continue;
    }
    if (cid != 3 || ct != thrift::kStruct) {
      r.skip(ct);
      continue;
    }
    r.begin_struct();
    read_column_metadata(r, c);
    r.end_struct();
  }
}

// A RowGroup, the reader inside it: the chunk of each of its columns, appended to `chunks`.
void read_row_group(CompactReader& r, const std::string& name,
                    std::vector<std::vector<ParquetFile::Chunk>>& chunks) {
  int16_t fid;
  uint8_t ft;
  while (r.next_field(fid, ft)) {
    if (fid != 1) {
      r.skip(ft);
      continue;
    }
    read_struct_list(r, ft, [&](uint32_t column) {
      if (chunks.size() <= column) chunks.resize(column + 1);
      read_column_chunk(r, name, chunks[column].emplace_back());
    });
  }
}

// The FileMetaData struct of the footer. Errors of the Thrift decoding name the file.
FileMetadata read_file_metadata(std::string_view footer, const char* origin,
                                const std::string& name) {
  FileMetadata meta;
  try {
    CompactReader r(footer, origin);
    int16_t id;
    uint8_t type;
    r.begin_struct();
    while (r.next_field(id, type)) {
      if (id == 2) {  // schema
        read_struct_list(r, type,
                         [&](uint32_t) { read_schema_element(r, meta.schema.emplace_back()); });
      } else if (id == 3 && type == thrift::kI64) {
        meta.num_rows = r.read_i64();
      } else if (id == 4) {  // row groups
        read_struct_list(r, type, [&](uint32_t) { read_row_group(r, name, meta.chunks); });
      } else {
        r.skip(type);
      }
    }
  } catch (const InputError& e) {
    if (!e.file().empty()) throw;
    throw InputError(name, e.reason() + " (Parquet footer)", e.offset());
  }
  return meta;
}

// Leaves of the schema tree, depth first; the root (element 0) is the table itself.
std::vector<ParquetColumnInfo> schema_leaves(const std::vector<SchemaElement>& schema,
                                             const std::string& name) {
  if (schema.empty()) throw InputError(name, "Parquet file has no schema");
  std::vector<ParquetColumnInfo> columns;
  struct Frame {
    int remaining;
    int16_t def, rep;
    std::string path, top;
  };
  std::vector<Frame> stack{{schema[0].num_children, 0, 0, "", ""}};
  for (size_t i = 1; i < schema.size(); ++i) {
    while (!stack.empty() && stack.back().remaining == 0) stack.pop_back();
    if (stack.empty() || stack.size() > 32) throw InputError(name, "malformed Parquet schema tree");
    Frame& parent = stack.back();
    --parent.remaining;
    const SchemaElement& e = schema[i];
    int16_t def = parent.def + (e.repetition != kRequired ? 1 : 0);
    int16_t rep = parent.rep + (e.repetition == kRepeated ? 1 : 0);
    std::string path =
        parent.path.empty() ? std::string(e.name) : parent.path + "." + std::string(e.name);
    std::string top = parent.top.empty() ? std::string(e.name) : parent.top;
    if (e.num_children > 0) {
      if (e.num_children > static_cast<int32_t>(schema.size()))
        throw InputError(name, "malformed Parquet schema tree");
      stack.push_back({e.num_children, def, rep, path, top});
      continue;
    }
    if (e.type < 0 || e.type > 7) throw InputError(name, "Parquet column without a physical type");
    // Zero-byte values would let a page declare 2^27 of them in no bytes at all.
    if (static_cast<ParquetType>(e.type) == ParquetType::kFixedLenByteArray && e.type_length <= 0)
      throw InputError(name, "Parquet FIXED_LEN_BYTE_ARRAY column '" + path +
                                 "' without a positive type_length");
    columns.push_back({path, top, static_cast<ParquetType>(e.type), e.type_length, def, rep});
  }
  return columns;
}

}  // namespace

std::vector<std::pair<uint32_t, uint32_t>> ParquetColumn::rows() const {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (uint32_t i = 0; i < valid.size(); ++i) {
    if (repetition.empty() || repetition[i] == 0) {
      if (!out.empty()) out.back().second = i;
      out.emplace_back(i, i);
    }
  }
  if (!out.empty()) out.back().second = static_cast<uint32_t>(valid.size());
  return out;
}

ParquetFile::ParquetFile(std::string_view bytes, std::string name, ParquetLimits limits)
    : bytes_(bytes), name_(std::move(name)), limits_(limits) {
  FileMetadata meta = read_file_metadata(footer_of(bytes, name_), bytes.data(), name_);
  num_rows_ = meta.num_rows;
  columns_ = schema_leaves(meta.schema, name_);
  chunks_ = std::move(meta.chunks);
  if (chunks_.size() > columns_.size())
    throw InputError(name_, "Parquet row groups have more columns than the schema");
  chunks_.resize(columns_.size());
  for (auto& cs : chunks_)
    for (const Chunk& c : cs)
      if (c.data_offset < 4 || c.total_compressed < 0 ||
          static_cast<uint64_t>(c.data_offset) >= bytes.size() ||
          c.dictionary_offset >= static_cast<int64_t>(bytes.size()) || c.num_values < 0)
        throw InputError(name_, "Parquet column chunk points outside the file");
}

int ParquetFile::find(std::string_view path) const {
  for (size_t i = 0; i < columns_.size(); ++i)
    if (columns_[i].path == path) return static_cast<int>(i);
  // A list column by its field name: the single leaf under it.
  int found = -1;
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i].name != path) continue;
    if (found >= 0) return -1;
    found = static_cast<int>(i);
  }
  return found;
}

ParquetColumn ParquetFile::read(int column) const {
  const ParquetColumnInfo& info = columns_.at(column);
  ParquetColumn out;
  out.type = info.type;
  for (const Chunk& c : chunks_[column]) read_chunk(info, c, out);
  return out;
}

}  // namespace jaxprof
