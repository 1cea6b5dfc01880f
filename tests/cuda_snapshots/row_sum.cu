// r: grid [1, 1, 1], block Some([64, 1, 1])
extern "C" __global__ void __launch_bounds__(64) r(float *__restrict__ data0, const float *__restrict__ data1, int64_t size0, int64_t size1) {
  (void)size0;
  (void)size1;
  float acc0;
  const int32_t v0 = (int32_t)threadIdx.x;
  const int32_t v1 = (v0 * 48);
  acc0 = 0e0f;
  for (int32_t ridx2 = 0; ridx2 < 12; ridx2++) {
    const float v3 = acc0;
    const int32_t v4 = (ridx2 * 4);
    const int32_t v5 = (v4 + 0);
    const int32_t v6 = (v1 + v5);
    const float v7 = data1[v6];
    const float v8 = (v3 + v7);
    const int32_t v9 = (v4 + 1);
    const int32_t v10 = (v1 + v9);
    const float v11 = data1[v10];
    const float v12 = (v8 + v11);
    const int32_t v13 = (v4 + 2);
    const int32_t v14 = (v1 + v13);
    const float v15 = data1[v14];
    const float v16 = (v12 + v15);
    const int32_t v17 = (v4 + 3);
    const int32_t v18 = (v1 + v17);
    const float v19 = data1[v18];
    const float v20 = (v16 + v19);
    acc0 = v20;
  }
  const float v21 = acc0;
  data0[v0] = v21;
}
