// r_32: grid [32, 1, 1], block Some([48, 2, 1])
extern "C" __global__ void __launch_bounds__(96) r_32(float *__restrict__ data0, const float *__restrict__ data1, int64_t size0, int64_t size1) {
  (void)size0;
  (void)size1;
  float acc0;
  __shared__ float shared0[96];
  const int32_t v0 = (int32_t)blockIdx.x;
  const int32_t v1 = (v0 * 2);
  const int32_t v2 = (int32_t)threadIdx.y;
  const int32_t v3 = (v1 + v2);
  const int32_t v4 = (int32_t)threadIdx.x;
  const bool v5 = (v4 < 1);
  const int32_t v6 = (v2 * 48);
  const int32_t v7 = (v4 + v6);
  const int32_t v8 = (v3 * 48);
  const int32_t v9 = (v8 + v4);
  const float v10 = data1[v9];
  acc0 = 0e0f;
  shared0[v7] = v10;
  __syncthreads();
  for (int32_t ridx11 = 0; ridx11 < 48; ridx11++) {
    const float v12 = acc0;
    const int32_t v13 = (ridx11 + v6);
    const float v14 = shared0[v13];
    const float v15 = (v12 + v14);
    acc0 = v15;
  }
  const float v16 = acc0;
  if (v5) {
    data0[v3] = v16;
  }
}
