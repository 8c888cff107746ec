#include "jaxprof/analysis/tables/table_arrow.h"

#include <cerrno>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace jaxprof {

struct ArrowExport::ColumnBuffers {
  std::vector<uint8_t> bits;     // kBool: the 0/1 bytes packed as Arrow's bits, LSB first
  std::vector<int32_t> offsets;  // kString: the dictionary as Arrow's utf8 (offsets and bytes)
  std::string bytes;
};

namespace {

// What an empty buffer points at: consumers may read a buffer of an empty array, never a null.
alignas(64) const uint8_t kEmptyBuffer[64] = {};

const void* data_or_empty(const void* p) { return p != nullptr ? p : kEmptyBuffer; }

const char* arrow_format(TableType t) {
  switch (t) {
    case TableType::kInt64:
      return "l";
    case TableType::kUInt64:
      return "L";
    case TableType::kDouble:
      return "g";
    case TableType::kBool:
      return "b";
    case TableType::kString:
      return "i";  // the codes; the dictionary's schema says utf8
  }
  return "l";
}

// Arrow's metadata encoding: an int32 count, then each key and value as an int32 length and bytes.
std::string field_metadata(const RecordColumn& c) {
  std::string out;
  auto put = [&out](std::string_view s) {
    const int32_t n = static_cast<int32_t>(s.size());
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out.append(s);
  };
  const int32_t pairs = 2;
  out.append(reinterpret_cast<const char*>(&pairs), sizeof pairs);
  put("unit");
  put(c.unit);
  put("meaning");
  put(c.meaning);
  return out;
}

struct SchemaData {
  std::string format, name, metadata;
  std::vector<ArrowSchema> child_structs;
  std::vector<ArrowSchema*> children;
  std::unique_ptr<ArrowSchema> dictionary;
};

void release_schema(ArrowSchema* s) {
  auto* d = static_cast<SchemaData*>(s->private_data);
  for (ArrowSchema* c : d->children)
    if (c->release != nullptr) c->release(c);
  if (d->dictionary && d->dictionary->release != nullptr)
    d->dictionary->release(d->dictionary.get());
  delete d;
  s->release = nullptr;
}

// Fills `out` with the strings `d` holds and its children; takes ownership of `d`.
void fill_schema(ArrowSchema* out, SchemaData* d, int64_t flags) {
  out->format = d->format.c_str();
  out->name = d->name.c_str();
  out->metadata = d->metadata.empty() ? nullptr : d->metadata.data();
  out->flags = flags;
  d->children.reserve(d->child_structs.size());
  for (ArrowSchema& c : d->child_structs) d->children.push_back(&c);
  out->n_children = static_cast<int64_t>(d->children.size());
  out->children = d->children.empty() ? nullptr : d->children.data();
  out->dictionary = d->dictionary.get();
  out->release = release_schema;
  out->private_data = d;
}

void column_schema(const RecordColumn& c, ArrowSchema* out) {
  auto* d = new SchemaData{arrow_format(c.type), c.name, field_metadata(c), {}, {}, {}};
  if (c.type == TableType::kString) {
    d->dictionary = std::make_unique<ArrowSchema>();
    fill_schema(d->dictionary.get(), new SchemaData{"u", "", "", {}, {}, {}}, 0);
  }
  fill_schema(out, d, ARROW_FLAG_NULLABLE);
}

struct ArrayData {
  std::shared_ptr<const ArrowExport> owner;  // the buffers the array points into
  std::vector<const void*> buffers;
  std::vector<ArrowArray> child_structs;
  std::vector<ArrowArray*> children;
  std::unique_ptr<ArrowArray> dictionary;
};

void release_array(ArrowArray* a) {
  auto* d = static_cast<ArrayData*>(a->private_data);
  for (ArrowArray* c : d->children)
    if (c->release != nullptr) c->release(c);
  if (d->dictionary && d->dictionary->release != nullptr)
    d->dictionary->release(d->dictionary.get());
  delete d;
  a->release = nullptr;
}

void fill_array(ArrowArray* out, ArrayData* d, uint64_t length, uint64_t null_count) {
  out->length = static_cast<int64_t>(length);
  out->null_count = static_cast<int64_t>(null_count);
  out->offset = 0;
  out->n_buffers = static_cast<int64_t>(d->buffers.size());
  out->buffers = d->buffers.data();
  d->children.reserve(d->child_structs.size());
  for (ArrowArray& c : d->child_structs) d->children.push_back(&c);
  out->n_children = static_cast<int64_t>(d->children.size());
  out->children = d->children.empty() ? nullptr : d->children.data();
  out->dictionary = d->dictionary.get();
  out->release = release_array;
  out->private_data = d;
}

const void* column_values(const RecordColumn& c, const ArrowExport::ColumnBuffers& b) {
  switch (c.type) {
    case TableType::kInt64:
      return c.i64.data();
    case TableType::kUInt64:
      return c.u64.data();
    case TableType::kDouble:
      return c.f64.data();
    case TableType::kBool:
      return b.bits.data();
    case TableType::kString:
      return c.codes.data();
  }
  return nullptr;
}

void column_array(const std::shared_ptr<const ArrowExport>& owner, const RecordColumn& c,
                  const ArrowExport::ColumnBuffers& b, uint64_t rows, ArrowArray* out) {
  auto* d = new ArrayData{owner, {}, {}, {}, {}};
  const void* validity = c.validity.empty() ? nullptr : c.validity.data();
  d->buffers = {validity, data_or_empty(column_values(c, b))};
  if (c.type == TableType::kString) {
    auto* dict = new ArrayData{
        owner, {nullptr, b.offsets.data(), data_or_empty(b.bytes.data())}, {}, {}, {}};
    d->dictionary = std::make_unique<ArrowArray>();
    fill_array(d->dictionary.get(), dict, b.offsets.size() - 1, 0);
  }
  fill_array(out, d, rows, c.validity.empty() ? 0 : c.null_count);
}

struct StreamData {
  std::shared_ptr<const ArrowExport> owner;
  bool done = false;
  std::string error;
};

// The stream's callbacks return an errno value on failure, with the message for get_last_error.
template <typename F>
int guarded(ArrowArrayStream* s, F&& f) {
  auto* d = static_cast<StreamData*>(s->private_data);
  try {
    f(*d);
    return 0;
  } catch (const std::exception& e) {
    d->error = e.what();
    return ENOMEM;
  }
}

int stream_schema(ArrowArrayStream* s, ArrowSchema* out) {
  return guarded(s, [out](StreamData& d) { d.owner->export_schema(out); });
}

int stream_next(ArrowArrayStream* s, ArrowArray* out) {
  return guarded(s, [out](StreamData& d) {
    if (d.done) {
      out->release = nullptr;  // the end of the stream
      return;
    }
    ArrowExport::export_stream_batch(d.owner, out);
    d.done = true;
  });
}

const char* stream_error(ArrowArrayStream* s) {
  auto* d = static_cast<StreamData*>(s->private_data);
  return d->error.empty() ? nullptr : d->error.c_str();
}

void release_stream(ArrowArrayStream* s) {
  delete static_cast<StreamData*>(s->private_data);
  s->release = nullptr;
}

}  // namespace

ArrowExport::ArrowExport(RecordTable table)
    : table_(std::move(table)), buffers_(new ColumnBuffers[table_.columns.size()]) {
  for (size_t i = 0; i < table_.columns.size(); ++i) {
    const RecordColumn& c = table_.columns[i];
    ColumnBuffers& b = buffers_[i];
    if (c.type == TableType::kBool) {
      b.bits.assign((c.b.size() + 7) / 8, 0);
      for (size_t r = 0; r < c.b.size(); ++r)
        if (c.b[r] != 0) b.bits[r >> 3] = static_cast<uint8_t>(b.bits[r >> 3] | 1u << (r & 7));
    } else if (c.type == TableType::kString) {
      b.offsets.reserve(c.dictionary.size() + 1);
      b.offsets.push_back(0);
      for (const std::string& s : c.dictionary) {
        b.bytes += s;
        b.offsets.push_back(static_cast<int32_t>(b.bytes.size()));
      }
    }
  }
}

ArrowExport::~ArrowExport() = default;

void ArrowExport::export_schema(ArrowSchema* out) const {
  auto* d = new SchemaData{"+s", "", "", {}, {}, {}};
  d->child_structs.resize(table_.columns.size());
  for (size_t i = 0; i < table_.columns.size(); ++i)
    column_schema(table_.columns[i], &d->child_structs[i]);
  fill_schema(out, d, 0);
}

void ArrowExport::export_stream_batch(const std::shared_ptr<const ArrowExport>& self,
                                      ArrowArray* out) {
  const RecordTable& t = self->table_;
  auto* d = new ArrayData{self, {nullptr}, {}, {}, {}};
  d->child_structs.resize(t.columns.size());
  for (size_t i = 0; i < t.columns.size(); ++i)
    column_array(self, t.columns[i], self->buffers_[i], t.rows, &d->child_structs[i]);
  fill_array(out, d, t.rows, 0);
}

void ArrowExport::export_stream(const std::shared_ptr<const ArrowExport>& self,
                                ArrowArrayStream* out) {
  out->get_schema = stream_schema;
  out->get_next = stream_next;
  out->get_last_error = stream_error;
  out->release = release_stream;
  out->private_data = new StreamData{self, false, {}};
}

}  // namespace jaxprof
