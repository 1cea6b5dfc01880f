// E_12: grid [12, 1, 1], block Some([256, 1, 1])
extern "C" __global__ void __launch_bounds__(256) E_12(uint16_t *__restrict__ data0, const float *__restrict__ data1, int64_t size0, int64_t size1) {
  (void)size0;
  (void)size1;
  const int32_t v0 = (int32_t)blockIdx.x;
  const int32_t v1 = (v0 * 256);
  const int32_t v2 = (int32_t)threadIdx.x;
  const int32_t v3 = (v1 + v2);
  const float v4 = data1[v3];
  const float v5 = morok_round_f16(v4);
  const float v6 = morok_round_f16((v5 + v5));
  data0[v3] = morok_f32_to_f16(v6);
}
