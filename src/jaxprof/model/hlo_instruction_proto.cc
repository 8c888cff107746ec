// HloInstructionProto and the messages inside it (shape, metadata, dot and convolution dimension
// numbers, window, precision config), decoded from the wire. Only the fields the analyses use are
// read; everything else is skipped.
#include <algorithm>
#include <utility>

#include "jaxprof/model/hlo_proto_decode.h"

namespace jaxprof::hlo_proto {
namespace {

using wire::Field;
using wire::Reader;

// A corrupt proto can nest tuple shapes as deep as its size allows; recursion must stay bounded.
constexpr int kMaxShapeDepth = 64;

// ShapeProto: element_type=2, dimensions=3, tuple_shapes=4 (layout=5 and the rest are skipped).
void read_shape(std::string_view msg, const uint8_t* origin, HloShape& out, int depth) {
  Reader r(msg, origin);
  if (depth > kMaxShapeDepth) corrupt(offset_in(r, msg), "shape nested too deeply");
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 2:
        out.element_type = static_cast<int32_t>(read_varint_field(r, f, "ShapeProto.element_type"));
        break;
      case 3:
        read_repeated_int(r, f, out.dimensions, "ShapeProto.dimensions");
        break;
      case 4: {
        std::string_view sub = read_string(r, f, "ShapeProto.tuple_shapes");
        out.tuple_shapes.emplace_back();
        read_shape(sub, origin, out.tuple_shapes.back(), depth + 1);
        break;
      }
      default:
        break;
    }
  }
}

// OpMetadata: op_type=1, op_name=2, source_file=3, source_line=4, stack_frame_id=15.
void read_metadata(std::string_view msg, const uint8_t* origin, HloInstruction& out) {
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        out.op_type = read_string(r, f, "OpMetadata.op_type");
        break;
      case 2:
        out.op_name = read_string(r, f, "OpMetadata.op_name");
        break;
      case 3:
        out.source_file = read_string(r, f, "OpMetadata.source_file");
        break;
      case 4:
        out.source_line = static_cast<int32_t>(read_varint_field(r, f, "OpMetadata.source_line"));
        break;
      case 15:
        out.stack_frame_id =
            static_cast<int32_t>(read_varint_field(r, f, "OpMetadata.stack_frame_id"));
        break;
      default:
        break;
    }
  }
}

// DotDimensionNumbers: lhs_contracting_dimensions=1, rhs_contracting_dimensions=2,
// lhs_batch_dimensions=3, rhs_batch_dimensions=4.
void read_dot_dimensions(std::string_view msg, const uint8_t* origin, HloDotDimensions& out) {
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        read_repeated_int(r, f, out.lhs_contracting, "DotDimensionNumbers.lhs_contracting");
        break;
      case 2:
        read_repeated_int(r, f, out.rhs_contracting, "DotDimensionNumbers.rhs_contracting");
        break;
      case 3:
        read_repeated_int(r, f, out.lhs_batch, "DotDimensionNumbers.lhs_batch");
        break;
      case 4:
        read_repeated_int(r, f, out.rhs_batch, "DotDimensionNumbers.rhs_batch");
        break;
      default:
        break;
    }
  }
}

// ConvolutionDimensionNumbers: input_batch_dimension=7, input_feature_dimension=8,
// input_spatial_dimensions=11, kernel_input_feature_dimension=3,
// kernel_output_feature_dimension=4, kernel_spatial_dimensions=6, output_batch_dimension=9,
// output_feature_dimension=10, output_spatial_dimensions=12.
void read_convolution_dimensions(std::string_view msg, const uint8_t* origin,
                                 HloConvolutionDimensions& out) {
  Reader r(msg, origin);
  Field f;
  auto scalar = [&](int64_t& dst) {
    dst = static_cast<int64_t>(read_varint_field(r, f, "ConvolutionDimensionNumbers field"));
  };
  while (r.next(f)) {
    switch (f.number) {
      case 3:
        scalar(out.kernel_input_feature);
        break;
      case 4:
        scalar(out.kernel_output_feature);
        break;
      case 6:
        read_repeated_int(r, f, out.kernel_spatial, "ConvolutionDimensionNumbers.kernel_spatial");
        break;
      case 7:
        scalar(out.input_batch);
        break;
      case 8:
        scalar(out.input_feature);
        break;
      case 9:
        scalar(out.output_batch);
        break;
      case 10:
        scalar(out.output_feature);
        break;
      case 11:
        read_repeated_int(r, f, out.input_spatial, "ConvolutionDimensionNumbers.input_spatial");
        break;
      case 12:
        read_repeated_int(r, f, out.output_spatial, "ConvolutionDimensionNumbers.output_spatial");
        break;
      default:
        break;
    }
  }
}

// Window: dimensions=1, each WindowDimension{size=1, stride=2, padding_low=3, padding_high=4,
// window_dilation=5, base_dilation=6} (window_reversal=7 does not change costs). Zero strides
// and dilations are proto3's unset value: XLA treats them as 1.
void read_window(std::string_view msg, const uint8_t* origin,
                 std::vector<HloWindowDimension>& out) {
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    if (f.number != 1) continue;
    HloWindowDimension& d = out.emplace_back();
    d.size = 0;
    Reader dr(read_string(r, f, "Window.dimensions"), origin);
    Field g;
    while (dr.next(g)) {
      if (g.number < 1 || g.number > 6) continue;
      const auto v = static_cast<int64_t>(read_varint_field(dr, g, "WindowDimension field"));
      switch (g.number) {
        case 1:
          d.size = v;
          break;
        case 2:
          d.stride = v;
          break;
        case 3:
          d.padding_low = v;
          break;
        case 4:
          d.padding_high = v;
          break;
        case 5:
          d.window_dilation = v;
          break;
        case 6:
          d.base_dilation = v;
          break;
      }
    }
    if (d.stride == 0) d.stride = 1;
    if (d.window_dilation == 0) d.window_dilation = 1;
    if (d.base_dilation == 0) d.base_dilation = 1;
  }
}

// PrecisionConfig: operand_precision=1 (repeated enum DEFAULT=0, HIGH=1, HIGHEST=2).
uint8_t read_operand_precision(std::string_view msg, const uint8_t* origin) {
  std::vector<int64_t> precisions;
  Reader r(msg, origin);
  Field f;
  while (r.next(f))
    if (f.number == 1) read_repeated_int(r, f, precisions, "PrecisionConfig.operand_precision");
  int64_t highest = 0;
  for (int64_t p : precisions) highest = std::max(highest, p);
  return static_cast<uint8_t>(std::clamp<int64_t>(highest, 0, 2));
}

}  // namespace

// HloInstructionProto: name=1, opcode=2, shape=3, metadata=7, parameter_number=9,
// fusion_kind=11, window=15, convolution_dimension_numbers=16, custom_call_target=28,
// dot_dimension_numbers=30, id=35, operand_ids=36, called_computation_ids=38,
// backend_config=43, replica_groups=49 (deprecated form), feature_group_count=50,
// precision_config=51, batch_group_count=58, collective_device_list=87,
// mesh_axes_replica_group_list=93.
void read_instruction(std::string_view msg, const uint8_t* origin, HloModule& m,
                      HloInstruction& out) {
  std::vector<std::vector<int64_t>> legacy_groups, explicit_groups, iota_groups, mesh_groups;
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        out.name = read_string(r, f, "HloInstructionProto.name");
        break;
      case 2:
        out.opcode = read_string(r, f, "HloInstructionProto.opcode");
        break;
      case 3:
        read_shape(read_string(r, f, "HloInstructionProto.shape"), origin, out.shape, 0);
        break;
      case 7:
        read_metadata(read_string(r, f, "HloInstructionProto.metadata"), origin, out);
        break;
      case 9:
        out.parameter_number =
            static_cast<int32_t>(read_varint_field(r, f, "HloInstructionProto.parameter_number"));
        break;
      case 11:
        out.fusion_kind = read_string(r, f, "HloInstructionProto.fusion_kind");
        break;
      case 15:
        if (out.window < 0) {
          out.window = static_cast<int32_t>(m.windows.size());
          m.windows.emplace_back();
        }
        read_window(read_string(r, f, "HloInstructionProto.window"), origin, m.windows[out.window]);
        break;
      case 16:
        if (out.convolution < 0) {
          out.convolution = static_cast<int32_t>(m.convolutions.size());
          m.convolutions.emplace_back();
        }
        read_convolution_dimensions(
            read_string(r, f, "HloInstructionProto.convolution_dimension_numbers"), origin,
            m.convolutions[out.convolution]);
        break;
      case 28:
        out.custom_call_target = read_string(r, f, "HloInstructionProto.custom_call_target");
        break;
      case 30:
        if (out.dot < 0) {
          out.dot = static_cast<int32_t>(m.dots.size());
          m.dots.emplace_back();
        }
        read_dot_dimensions(read_string(r, f, "HloInstructionProto.dot_dimension_numbers"), origin,
                            m.dots[out.dot]);
        break;
      case 43:
        out.backend_config = read_string(r, f, "HloInstructionProto.backend_config");
        break;
      case 50:
        out.feature_group_count = static_cast<int32_t>(
            read_varint_field(r, f, "HloInstructionProto.feature_group_count"));
        break;
      case 51:
        out.operand_precision = read_operand_precision(
            read_string(r, f, "HloInstructionProto.precision_config"), origin);
        break;
      case 58:
        out.batch_group_count =
            static_cast<int32_t>(read_varint_field(r, f, "HloInstructionProto.batch_group_count"));
        break;
      case 35:
        out.id = static_cast<int64_t>(read_varint_field(r, f, "HloInstructionProto.id"));
        break;
      case 36:
        read_repeated_int(r, f, out.operand_ids, "HloInstructionProto.operand_ids");
        break;
      case 38:
        read_repeated_int(r, f, out.called_computation_ids,
                          "HloInstructionProto.called_computation_ids");
        break;
      case 49:
        legacy_groups.push_back(
            read_replica_group(read_string(r, f, "HloInstructionProto.replica_groups"), origin));
        break;
      case 87:
        read_device_list(read_string(r, f, "HloInstructionProto.collective_device_list"), origin,
                         explicit_groups, iota_groups);
        break;
      case 93:
        mesh_groups = read_mesh_axes(
            read_string(r, f, "HloInstructionProto.mesh_axes_replica_group_list"), origin);
        break;
      default:
        break;
    }
  }
  // Newer XLA writes collective_device_list (explicit or iota); older writes replica_groups. When
  // both are present they describe the same groups, so prefer the newer field.
  if (!explicit_groups.empty()) {
    out.replica_groups = std::move(explicit_groups);
  } else if (!iota_groups.empty()) {
    out.replica_groups = std::move(iota_groups);
  } else if (!mesh_groups.empty()) {
    out.replica_groups = std::move(mesh_groups);
  } else {
    out.replica_groups = std::move(legacy_groups);
  }
}

}  // namespace jaxprof::hlo_proto
