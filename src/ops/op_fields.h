// OpField: one argument of a transform description, by name, type and place, so that the
// bindings can build any description from (name, value) pairs without a line per op.
//
//   Field<&transforms::Pad::padding>("padding")   // an int array of length 4
//
// Thread-safety: plain values.
#ifndef SLUICE_OPS_OP_FIELDS_H_
#define SLUICE_OPS_OP_FIELDS_H_

#include <array>
#include <cstdint>
#include <variant>

#include "sluice/transforms.h"

namespace sluice {

// The storage type of a field: a scalar, or an array of `length` scalars.
enum class FieldType : uint8_t { kInt, kDouble, kFloat, kByte, kBool, kInterpolation, kPaddingMode };

struct OpField {
  const char* name = nullptr;
  FieldType type = FieldType::kInt;
  int length = 0;                               // 0: a scalar; else a std::array of this many
  void* (*address)(transforms::Transform& t);   // the field in t (t holds the op's type)
};

namespace op_fields_internal {

template <typename M> struct Scalar;
template <> struct Scalar<int> { static constexpr FieldType kType = FieldType::kInt; };
template <> struct Scalar<double> { static constexpr FieldType kType = FieldType::kDouble; };
template <> struct Scalar<float> { static constexpr FieldType kType = FieldType::kFloat; };
template <> struct Scalar<uint8_t> { static constexpr FieldType kType = FieldType::kByte; };
template <> struct Scalar<bool> { static constexpr FieldType kType = FieldType::kBool; };
template <> struct Scalar<transforms::Interpolation> {
  static constexpr FieldType kType = FieldType::kInterpolation;
};
template <> struct Scalar<transforms::PaddingMode> {
  static constexpr FieldType kType = FieldType::kPaddingMode;
};

template <typename M> struct Shape {
  static constexpr FieldType kType = Scalar<M>::kType;
  static constexpr int kLength = 0;
};
template <typename E, size_t N> struct Shape<std::array<E, N>> {
  static constexpr FieldType kType = Scalar<E>::kType;
  static constexpr int kLength = static_cast<int>(N);
};

template <typename P> struct Member;
template <typename C, typename M> struct Member<M C::*> {
  using Class = C;
  using Type = M;
};

}  // namespace op_fields_internal

// The field `member` (a pointer to a member of a transform description) named `name`.
template <auto member>
OpField Field(const char* name) {
  using M = op_fields_internal::Member<decltype(member)>;
  using S = op_fields_internal::Shape<typename M::Type>;
  return OpField{name, S::kType, S::kLength, [](transforms::Transform& t) -> void* {
                   return &(std::get<typename M::Class>(t).*member);
                 }};
}

}  // namespace sluice

#endif  // SLUICE_OPS_OP_FIELDS_H_
