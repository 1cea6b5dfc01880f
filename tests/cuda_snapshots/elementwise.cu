// E_12: grid [12, 1, 1], block Some([256, 1, 1])
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define INFINITY (__int_as_float(0x7f800000))
#define NAN (__int_as_float(0x7fffffff))
static inline float morok_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
  float f;
  if (e == 0x1fu) bits = sign | 0x7f800000u | (m << 13);
  else if (e != 0) bits = sign | ((e + 112u) << 23) | (m << 13);
  else { f = (float)m * 0x1p-24f; memcpy(&bits, &f, 4); bits |= sign; }
  memcpy(&f, &bits, 4);
  return f;
}
static inline uint16_t morok_f32_to_f16(float f) {
  uint32_t x, ax, sign;
  memcpy(&x, &f, 4);
  sign = (x >> 16) & 0x8000u;
  ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  if (ax < 0x38800000u) {
    float a;
    memcpy(&a, &ax, 4);
    return (uint16_t)(sign | (uint32_t)rintf(a * 0x1p24f));
  }
  ax -= 0x38000000u;
  ax += 0xfffu + ((ax >> 13) & 1u);
  return (uint16_t)(sign | (ax >> 13));
}
static inline float morok_bf16_to_f32(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}
static inline uint16_t morok_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}
static inline float morok_f64_to_f32_odd(double d) {
  float f = (float)d;
  if ((double)f != d && d == d) {
    uint32_t b;
    memcpy(&b, &f, 4);
    if (fabs((double)f) > fabs(d)) b -= 1u;
    b |= 1u;
    memcpy(&f, &b, 4);
  }
  return f;
}
static inline float morok_round_f16(float f) { return morok_f16_to_f32(morok_f32_to_f16(f)); }
static inline float morok_round_bf16(float f) { return morok_bf16_to_f32(morok_f32_to_bf16(f)); }

extern "C" __global__ void __launch_bounds__(256) E_12(float *__restrict__ data0, const float *__restrict__ data1, int64_t size0, int64_t size1) {
  (void)size0;
  (void)size1;
  const int32_t v0 = (int32_t)blockIdx.x;
  const int32_t v1 = (v0 * 256);
  const int32_t v2 = (int32_t)threadIdx.x;
  const int32_t v3 = (v1 + v2);
  const float v4 = data1[v3];
  const float v5 = expf(v4);
  const float v6 = (v5 + v4);
  data0[v3] = v6;
}
