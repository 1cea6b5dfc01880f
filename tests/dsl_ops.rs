//! Every op of the table (`morok_core::tensor_ops::OPS`) is callable from
//! a DSL body: one `#[morok::kernel]` per op, whose embedded graph builds
//! the very graph (the same interned root) the `Tensor` method gives (or,
//! for `interpolate` and `interpolate_scale`, whose graph holds index buffers made on the host at
//! each call, the same values).
//! A test checks that each entry of the table has its kernel here, so an
//! op added to the table without a DSL test fails.

use morok::{
    AttentionOptions, ClassLossOptions, Conv1dOptions, Conv3dOptions, ConvOptions,
    ConvTranspose3dOptions, ConvTransposeOptions, DType, Index, InterpolateMode, IsCloseOptions,
    PadMode, Pads, Pool3dOptions, PoolOptions, Reduction, RoundingMode, ScalarType, ScatterReduce,
    Slice, Tensor,
};
use morok_core::tensor_ops::OPS;
use std::sync::Arc;

#[morok::kernel]
fn k_neg(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.neg()
}

#[morok::kernel]
fn k_relu(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.relu()
}

#[morok::kernel]
fn k_abs(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.abs()
}

#[morok::kernel]
fn k_sign(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.sign()
}

#[morok::kernel]
fn k_floor(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.floor()
}

#[morok::kernel]
fn k_ceil(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.ceil()
}

#[morok::kernel]
fn k_round(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.round()
}

#[morok::kernel]
fn k_trunc(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.trunc()
}

#[morok::kernel]
fn k_exp(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.exp()
}

#[morok::kernel]
fn k_exp2(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.exp2()
}

#[morok::kernel]
fn k_expm1(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.expm1()
}

#[morok::kernel]
fn k_log(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.log()
}

#[morok::kernel]
fn k_log2(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.log2()
}

#[morok::kernel]
fn k_log10(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.log10()
}

#[morok::kernel]
fn k_log1p(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.log1p()
}

#[morok::kernel]
fn k_sqrt(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.sqrt()
}

#[morok::kernel]
fn k_rsqrt(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.rsqrt()
}

#[morok::kernel]
fn k_reciprocal(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.reciprocal()
}

#[morok::kernel]
fn k_sin(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.sin()
}

#[morok::kernel]
fn k_cos(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.cos()
}

#[morok::kernel]
fn k_tan(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.tan()
}

#[morok::kernel]
fn k_asin(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.asin()
}

#[morok::kernel]
fn k_acos(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.acos()
}

#[morok::kernel]
fn k_atan(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.atan()
}

#[morok::kernel]
fn k_sinh(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.sinh()
}

#[morok::kernel]
fn k_cosh(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.cosh()
}

#[morok::kernel]
fn k_tanh(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.tanh()
}

#[morok::kernel]
fn k_asinh(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.asinh()
}

#[morok::kernel]
fn k_acosh(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.acosh()
}

#[morok::kernel]
fn k_atanh(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.atanh()
}

#[morok::kernel]
fn k_erf(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.erf()
}

#[morok::kernel]
fn k_sigmoid(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.sigmoid()
}

#[morok::kernel]
fn k_logsigmoid(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.logsigmoid()
}

#[morok::kernel]
fn k_gelu(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.gelu()
}

#[morok::kernel]
fn k_gelu_tanh(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.gelu_tanh()
}

#[morok::kernel]
fn k_quick_gelu(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.quick_gelu()
}

#[morok::kernel]
fn k_silu(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.silu()
}

#[morok::kernel]
fn k_mish(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.mish()
}

#[morok::kernel]
fn k_selu(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.selu()
}

#[morok::kernel]
fn k_softsign(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.softsign()
}

#[morok::kernel]
fn k_hardsigmoid(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.hardsigmoid()
}

#[morok::kernel]
fn k_hardswish(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.hardswish()
}

#[morok::kernel]
fn k_relu6(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.relu6()
}

#[morok::kernel]
fn k_leaky_relu(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.leaky_relu(0.01)
}

#[morok::kernel]
fn k_elu(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.elu(1.0)
}

#[morok::kernel]
fn k_celu(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.celu(0.5)
}

#[morok::kernel]
fn k_softplus(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.softplus(1.0, 20.0)
}

#[morok::kernel]
fn k_hardtanh(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.hardtanh(-1.0, 1.0)
}

#[morok::kernel]
fn k_isnan(x: Tensor<f32, 2, 3>) -> Tensor<bool, 2, 3> {
    x.isnan()
}

#[morok::kernel]
fn k_isinf(x: Tensor<f32, 2, 3>) -> Tensor<bool, 2, 3> {
    x.isinf()
}

#[morok::kernel]
fn k_isfinite(x: Tensor<f32, 2, 3>) -> Tensor<bool, 2, 3> {
    x.isfinite()
}

#[morok::kernel]
fn k_isposinf(x: Tensor<f32, 2, 3>) -> Tensor<bool, 2, 3> {
    x.isposinf()
}

#[morok::kernel]
fn k_isneginf(x: Tensor<f32, 2, 3>) -> Tensor<bool, 2, 3> {
    x.isneginf()
}

#[morok::kernel]
fn k_logical_not(c: Tensor<bool, 2, 3>) -> Tensor<bool, 2, 3> {
    c.logical_not()
}

#[morok::kernel]
fn k_bitwise_not(i: Tensor<i32, 2, 3>) -> Tensor<i32, 2, 3> {
    i.bitwise_not()
}

#[morok::kernel]
fn k_add(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.add(y)
}

#[morok::kernel]
fn k_sub(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.sub(y)
}

#[morok::kernel]
fn k_mul(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.mul(y)
}

#[morok::kernel]
fn k_div(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.div(y)
}

#[morok::kernel]
fn k_floor_div(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.floor_div(y)
}

#[morok::kernel]
fn k_remainder(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.remainder(y)
}

#[morok::kernel]
fn k_fmod(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.fmod(y)
}

#[morok::kernel]
fn k_pow(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.pow(y)
}

#[morok::kernel]
fn k_maximum(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.maximum(y)
}

#[morok::kernel]
fn k_minimum(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.minimum(y)
}

#[morok::kernel]
fn k_atan2(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.atan2(y)
}

#[morok::kernel]
fn k_copysign(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.copysign(y)
}

#[morok::kernel]
fn k_logaddexp(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.logaddexp(y)
}

#[morok::kernel]
fn k_eq(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<bool, 2, 3> {
    x.eq(y)
}

#[morok::kernel]
fn k_ne(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<bool, 2, 3> {
    x.ne(y)
}

#[morok::kernel]
fn k_lt(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<bool, 2, 3> {
    x.lt(y)
}

#[morok::kernel]
fn k_le(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<bool, 2, 3> {
    x.le(y)
}

#[morok::kernel]
fn k_gt(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<bool, 2, 3> {
    x.gt(y)
}

#[morok::kernel]
fn k_ge(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<bool, 2, 3> {
    x.ge(y)
}

#[morok::kernel]
fn k_logical_and(c: Tensor<bool, 2, 3>, d: Tensor<bool, 3>) -> Tensor<bool, 2, 3> {
    c.logical_and(d)
}

#[morok::kernel]
fn k_logical_or(c: Tensor<bool, 2, 3>, d: Tensor<bool, 3>) -> Tensor<bool, 2, 3> {
    c.logical_or(d)
}

#[morok::kernel]
fn k_logical_xor(c: Tensor<bool, 2, 3>, d: Tensor<bool, 3>) -> Tensor<bool, 2, 3> {
    c.logical_xor(d)
}

#[morok::kernel]
fn k_bitwise_and(i: Tensor<i32, 2, 3>, j: Tensor<i32, 3>) -> Tensor<i32, 2, 3> {
    i.bitwise_and(j)
}

#[morok::kernel]
fn k_bitwise_or(i: Tensor<i32, 2, 3>, j: Tensor<i32, 3>) -> Tensor<i32, 2, 3> {
    i.bitwise_or(j)
}

#[morok::kernel]
fn k_bitwise_xor(i: Tensor<i32, 2, 3>, j: Tensor<i32, 3>) -> Tensor<i32, 2, 3> {
    i.bitwise_xor(j)
}

#[morok::kernel]
fn k_clamp(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.clamp(-0.5, 0.5)
}

#[morok::kernel]
fn k_where_(c: Tensor<bool, 2, 3>, x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    c.where_(x, 0.0)
}

#[morok::kernel]
fn k_cast(x: Tensor<f32, 2, 3>) -> Tensor<f16, 2, 3> {
    x.cast(f16)
}

#[morok::kernel]
fn k_sum(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2> {
    x.sum([1], false)
}

#[morok::kernel]
fn k_prod(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2> {
    x.prod([1], false)
}

#[morok::kernel]
fn k_mean(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2> {
    x.mean([1], false)
}

#[morok::kernel]
fn k_max(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2> {
    x.max([1], false)
}

#[morok::kernel]
fn k_min(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2> {
    x.min([1], false)
}

#[morok::kernel]
fn k_logsumexp(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2> {
    x.logsumexp([1], false)
}

#[morok::kernel]
fn k_any(c: Tensor<bool, 2, 3>) -> Tensor<bool, 2, 1> {
    c.any([1], true)
}

#[morok::kernel]
fn k_all(c: Tensor<bool, 2, 3>) -> Tensor<bool, 2, 1> {
    c.all([1], true)
}

#[morok::kernel]
fn k_var(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2> {
    x.var([1], 1, false)
}

#[morok::kernel]
fn k_std(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2> {
    x.std([1], 1, false)
}

#[morok::kernel]
fn k_argmax(x: Tensor<f32, 2, 3>) -> Tensor<i64, 2> {
    x.argmax(1)
}

#[morok::kernel]
fn k_argmin(x: Tensor<f32, 2, 3>) -> Tensor<i64, 2> {
    x.argmin(1)
}

#[morok::kernel]
fn k_softmax(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.softmax(-1)
}

#[morok::kernel]
fn k_log_softmax(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.log_softmax(-1)
}

#[morok::kernel]
fn k_softmin(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.softmin(-1)
}

#[morok::kernel]
fn k_cumsum(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.cumsum(-1)
}

#[morok::kernel]
fn k_cumprod(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.cumprod(-1)
}

#[morok::kernel]
fn k_logcumsumexp(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.logcumsumexp(-1)
}

#[morok::kernel]
fn k_gather(x: Tensor<f32, 2, 3>, ix: Tensor<i64, 2, 2>) -> Tensor<f32, 2, 2> {
    x.gather(1, ix)
}

#[morok::kernel]
fn k_index_select(x: Tensor<f32, 2, 3>, ix: Tensor<i64, 4>) -> Tensor<f32, 2, 4> {
    x.index_select(1, ix)
}

#[morok::kernel]
fn k_masked_fill(x: Tensor<f32, 2, 3>, c: Tensor<bool, 3>) -> Tensor<f32, 2, 3> {
    x.masked_fill(c, 0.5)
}

#[morok::kernel]
fn k_one_hot(i: Tensor<i32, 2, 3>) -> Tensor<i64, 2, 3, 4> {
    i.one_hot(4)
}

#[morok::kernel]
fn k_mse_loss(x: Tensor<f32, 2, 3>, t: Tensor<f32, 2, 3>) -> Tensor<f32> {
    x.mse_loss(t, Reduction::Mean)
}

#[morok::kernel]
fn k_l1_loss(x: Tensor<f32, 2, 3>, t: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.l1_loss(t, Reduction::None)
}

#[morok::kernel]
fn k_sort(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.sort(1, true).0
}

#[morok::kernel]
fn k_argsort(x: Tensor<f32, 2, 3>) -> Tensor<i64, 2, 3> {
    x.argsort(-1, false)
}

#[morok::kernel]
fn k_topk(x: Tensor<f32, 2, 3>) -> Tensor<i64, 2, 2> {
    x.topk(2, 1, true).1
}

#[morok::kernel]
fn k_cummax(x: Tensor<f32, 2, 3>) -> Tensor<i64, 2, 3> {
    x.cummax(1).1
}

#[morok::kernel]
fn k_cummin(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    (x.cummin(0)).0
}

#[morok::kernel]
fn k_var_mean(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2> {
    x.var_mean([1], 1, false).0
}

#[morok::kernel]
fn k_std_mean(x: Tensor<f32, 2, 3>) -> Tensor<f32, 1, 3> {
    x.std_mean([0], 0, true).1
}

#[morok::kernel]
fn k_layernorm(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.layernorm([-1], 0.00001)
}

#[morok::kernel]
fn k_tril(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.tril(0)
}

#[morok::kernel]
fn k_triu(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.triu(0)
}

#[morok::kernel]
fn k_matmul(x: Tensor<f32, 2, 3>, w: Tensor<f32, 3, 4>) -> Tensor<f32, 2, 4> {
    x.matmul(w)
}

#[morok::kernel]
fn k_dot(x: Tensor<f32, 2, 3>, w: Tensor<f32, 3, 4>) -> Tensor<f32, 2, 4> {
    x.dot(w)
}

#[morok::kernel]
fn k_reshape(x: Tensor<f32, 2, 3>) -> Tensor<f32, 3, 2> {
    x.reshape([3, -1])
}

#[morok::kernel]
fn k_expand(r: Tensor<f32, 1, 3>) -> Tensor<f32, 2, 3> {
    r.expand([2, -1])
}

#[morok::kernel]
fn k_transpose(x: Tensor<f32, 2, 3>) -> Tensor<f32, 3, 2> {
    x.transpose(0, 1)
}

#[morok::kernel]
fn k_permute(x: Tensor<f32, 2, 3>) -> Tensor<f32, 3, 2> {
    x.permute([1, 0])
}

#[morok::kernel]
fn k_flip(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.flip([0, -1])
}

#[morok::kernel]
fn k_squeeze(m: Tensor<f32, 2, 1, 3>) -> Tensor<f32, 2, 3> {
    m.squeeze(1)
}

#[morok::kernel]
fn k_squeeze_all(m: Tensor<f32, 2, 1, 3>) -> Tensor<f32, 2, 3> {
    m.squeeze_all()
}

#[morok::kernel]
fn k_unflatten(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3, 1> {
    x.unflatten(1, [-1, 1])
}

#[morok::kernel]
fn k_normalize(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.normalize(2.0, -1, 0.000001)
}

#[morok::kernel]
fn k_unsqueeze(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 1, 3> {
    x.unsqueeze(1)
}

#[morok::kernel]
fn k_flatten(m: Tensor<f32, 2, 1, 3>) -> Tensor<f32, 2, 3> {
    m.flatten(1, 2)
}

#[morok::kernel]
fn k_repeat(x: Tensor<f32, 2, 3>) -> Tensor<f32, 4, 3> {
    x.repeat([2, 1])
}

#[morok::kernel]
fn k_pad(x: Tensor<f32, 2, 3>) -> Tensor<f32, 3, 4> {
    x.pad([(1, 0), (-1, 2)], 0.5)
}

#[morok::kernel]
fn k_shrink(x: Tensor<f32, 2, 3>) -> Tensor<f32, 1, 2> {
    x.shrink([(1, 2), (0, 2)])
}

#[morok::kernel]
fn k_roll(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.roll([1, -2], [0, 1])
}

#[morok::kernel]
fn k_diagonal(m: Tensor<f32, 2, 1, 3>) -> Tensor<f32, 1, 2> {
    m.diagonal(1, 0, -1)
}

#[morok::kernel]
fn k_unfold(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 2, 2> {
    x.unfold(1, 2, 1)
}

#[morok::kernel]
fn k_repeat_interleave(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 6> {
    x.repeat_interleave(2, Some(-1))
}

#[morok::kernel]
fn k_scatter(
    x: Tensor<f32, 2, 3>,
    ix: Tensor<i64, 2, 2>,
    s: Tensor<f32, 2, 2>,
) -> Tensor<f32, 2, 3> {
    x.scatter(1, ix, s)
}

#[morok::kernel]
fn k_scatter_add(
    x: Tensor<f32, 2, 3>,
    ix: Tensor<i64, 2, 2>,
    s: Tensor<f32, 2, 2>,
) -> Tensor<f32, 2, 3> {
    x.scatter_add(1, ix, s)
}

#[morok::kernel]
fn k_cross_entropy(x: Tensor<f32, 2, 3>, l: Tensor<i64, 2>) -> Tensor<f32> {
    x.cross_entropy(l)
}

#[morok::kernel]
fn k_conv2d(
    im: Tensor<f32, 1, 2, 5, 5>,
    k: Tensor<f32, 3, 2, 3, 3>,
    kb: Tensor<f32, 3>,
) -> Tensor<f32, 1, 3, 2, 5> {
    im.conv2d(
        k,
        Some(kb),
        ConvOptions {
            stride: (2, 1),
            padding: Pads([(1, 0), (0, 2)]),
            ..Default::default()
        },
    )
}

#[morok::kernel]
fn k_max_pool2d(im: Tensor<f32, 1, 2, 5, 5>) -> Tensor<f32, 1, 2, 3, 3> {
    im.max_pool2d(PoolOptions::new((2, 2)).ceil_mode(true))
}

#[morok::kernel]
fn k_avg_pool2d(im: Tensor<f32, 1, 2, 5, 5>) -> Tensor<f32, 1, 2, 5, 5> {
    im.avg_pool2d(
        PoolOptions::new((3, 3))
            .stride((1, 1))
            .padding(1)
            .count_include_pad(false),
    )
}

#[morok::kernel]
fn k_max_pool1d(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 1> {
    x.max_pool1d(PoolOptions::new((1, 2)))
}

#[morok::kernel]
fn k_avg_pool1d(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 2> {
    x.avg_pool1d(PoolOptions::new((1, 2)).stride((1, 1)))
}

#[morok::kernel]
fn k_slice(x: Tensor<f32, 2, 3>) -> Tensor<f32, 1, 2> {
    x.slice([-1.., Slice::all().step(2)])
}

#[morok::kernel]
fn k_interpolate(im: Tensor<f32, 1, 2, 5, 5>) -> Tensor<f32, 1, 2, 3, 7> {
    im.interpolate([3, 7], InterpolateMode::Bilinear, false)
}

#[morok::kernel]
fn k_bitwise_left_shift(i: Tensor<i32, 2, 3>, j: Tensor<i32, 3>) -> Tensor<i32, 2, 3> {
    i.bitwise_left_shift(j)
}

#[morok::kernel]
fn k_bitwise_right_shift(i: Tensor<i32, 2, 3>) -> Tensor<i32, 2, 3> {
    i.bitwise_right_shift(1)
}

#[morok::kernel]
fn k_full_like(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.full_like(0.5)
}

#[morok::kernel]
fn k_zeros_like(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.zeros_like()
}

#[morok::kernel]
fn k_ones_like(i: Tensor<i32, 2, 3>) -> Tensor<i32, 2, 3> {
    i.ones_like()
}

#[morok::kernel]
fn k_contiguous(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.contiguous()
}

#[morok::kernel]
fn k_sum_dtype(i: Tensor<i32, 2, 3>) -> Tensor<f64, 2, 1> {
    i.sum_dtype([1], true, f64)
}

#[morok::kernel]
fn k_prod_dtype(i: Tensor<i32, 2, 3>) -> Tensor<i64, 3> {
    i.prod_dtype([0], false, i64)
}

#[morok::kernel]
fn k_linear(x: Tensor<f32, 2, 3>, lw: Tensor<f32, 4, 3>, lb: Tensor<f32, 4>) -> Tensor<f32, 2, 4> {
    x.linear(lw, Some(lb))
}

#[morok::kernel]
fn k_diag(y: Tensor<f32, 3>) -> Tensor<f32, 4, 4> {
    y.diag(-1)
}

#[morok::kernel]
fn k_max_pool3d(vol: Tensor<f32, 1, 2, 4, 4, 4>) -> Tensor<f32, 1, 2, 2, 2, 2> {
    vol.max_pool3d(Pool3dOptions::new((2, 2, 2)))
}

#[morok::kernel]
fn k_avg_pool3d(vol: Tensor<f32, 1, 2, 4, 4, 4>) -> Tensor<f32, 1, 2, 4, 4, 4> {
    vol.avg_pool3d(Pool3dOptions::new((3, 3, 3)).stride((1, 1, 1)).padding(1))
}

#[morok::kernel]
fn k_max_pool1d_with_indices(x: Tensor<f32, 2, 3>) -> Tensor<i64, 2, 1> {
    x.max_pool1d_with_indices(PoolOptions::new((1, 2))).1
}

#[morok::kernel]
fn k_max_pool2d_with_indices(im: Tensor<f32, 1, 2, 5, 5>) -> Tensor<f32, 1, 2, 2, 2> {
    im.max_pool2d_with_indices(PoolOptions::new((2, 2))).0
}

#[morok::kernel]
fn k_max_pool3d_with_indices(vol: Tensor<f32, 1, 2, 4, 4, 4>) -> Tensor<i64, 1, 2, 2, 2, 2> {
    vol.max_pool3d_with_indices(Pool3dOptions::new((2, 2, 2))).1
}

#[morok::kernel]
fn k_broadcast_to(y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    y.broadcast_to([2, 3])
}

#[morok::kernel]
fn k_smooth_l1_loss(x: Tensor<f32, 2, 3>, t: Tensor<f32, 2, 3>) -> Tensor<f32> {
    x.smooth_l1_loss(t, Reduction::Sum, 0.5)
}

#[morok::kernel]
fn k_conv1d(sq: Tensor<f32, 1, 2, 7>, k1: Tensor<f32, 3, 2, 3>) -> Tensor<f32, 1, 3, 3> {
    sq.conv1d(
        k1,
        None,
        Conv1dOptions {
            stride: 2,
            ..Default::default()
        },
    )
}

#[morok::kernel]
fn k_conv3d(
    vol: Tensor<f32, 1, 2, 4, 4, 4>,
    k3: Tensor<f32, 3, 2, 2, 2, 2>,
) -> Tensor<f32, 1, 3, 4, 3, 3> {
    vol.conv3d(
        k3,
        None,
        Conv3dOptions {
            padding: Pads([(1, 0), (0, 0), (0, 0)]),
            ..Default::default()
        },
    )
}

#[morok::kernel]
fn k_conv_transpose1d(sq: Tensor<f32, 1, 2, 7>, t1: Tensor<f32, 2, 3, 3>) -> Tensor<f32, 1, 3, 9> {
    sq.conv_transpose1d(t1, None, ConvTransposeOptions::default())
}

#[morok::kernel]
fn k_conv_transpose2d(
    im: Tensor<f32, 1, 2, 5, 5>,
    t2: Tensor<f32, 2, 3, 2, 2>,
    kb: Tensor<f32, 3>,
) -> Tensor<f32, 1, 3, 10, 10> {
    im.conv_transpose2d(
        t2,
        Some(kb),
        ConvTransposeOptions {
            stride: (2, 2),
            ..Default::default()
        },
    )
}

#[morok::kernel]
fn k_conv_transpose3d(
    vol: Tensor<f32, 1, 2, 4, 4, 4>,
    t3: Tensor<f32, 2, 1, 1, 1, 1>,
) -> Tensor<f32, 1, 1, 4, 4, 4> {
    vol.conv_transpose3d(t3, None, ConvTranspose3dOptions::default())
}

#[morok::kernel]
fn k_isclose(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<bool, 2, 3> {
    x.isclose(
        y,
        IsCloseOptions {
            rtol: 0.1,
            ..Default::default()
        },
    )
}

#[morok::kernel]
fn k_scaled_dot_product_attention(
    q: Tensor<f32, 1, 2, 4, 3>,
    kk: Tensor<f32, 1, 2, 5, 3>,
    vv: Tensor<f32, 1, 2, 5, 6>,
) -> Tensor<f32, 1, 2, 4, 6> {
    q.scaled_dot_product_attention(
        kk,
        vv,
        AttentionOptions {
            is_causal: true,
            ..Default::default()
        },
    )
}

#[morok::kernel]
fn k_scatter_reduce(
    x: Tensor<f32, 2, 3>,
    ix: Tensor<i64, 2, 2>,
    s: Tensor<f32, 2, 2>,
) -> Tensor<f32, 2, 3> {
    x.scatter_reduce(1, ix, s, ScatterReduce::Amax, false)
}

#[morok::kernel]
fn k_pad_mode(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 5> {
    x.pad_mode([(0, 0), (2, 0)], PadMode::Reflect)
}

#[morok::kernel]
fn k_binary_cross_entropy(
    x: Tensor<f32, 2, 3>,
    t: Tensor<f32, 2, 3>,
    y: Tensor<f32, 3>,
) -> Tensor<f32> {
    x.sigmoid()
        .binary_cross_entropy(t, Some(y), Reduction::Mean)
}

#[morok::kernel]
fn k_binary_cross_entropy_with_logits(
    x: Tensor<f32, 2, 3>,
    t: Tensor<f32, 2, 3>,
    y: Tensor<f32, 3>,
) -> Tensor<f32, 2, 3> {
    x.binary_cross_entropy_with_logits(t, None, Some(y), Reduction::None)
}

#[morok::kernel]
fn k_scatter_value(x: Tensor<f32, 2, 3>, ix: Tensor<i64, 2, 2>) -> Tensor<f32, 2, 3> {
    x.scatter_value(1, ix, 0.5)
}

#[morok::kernel]
fn k_lerp(x: Tensor<f32, 2, 3>, t: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.lerp(t, y)
}

#[morok::kernel]
fn k_bitcast(x: Tensor<f32, 2, 3>) -> Tensor<i32, 2, 3> {
    x.bitcast(i32)
}

#[morok::kernel]
fn k_div_mode(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.div_mode(y, RoundingMode::Floor)
}

#[morok::kernel]
fn k_interpolate_scale(im: Tensor<f32, 1, 2, 5, 5>) -> Tensor<f32, 1, 2, 10, 7> {
    im.interpolate_scale([2.0, 1.5], InterpolateMode::Bilinear, false)
}

#[morok::kernel]
fn k_max_unpool1d(p1: Tensor<f32, 2, 1>, p1i: Tensor<i64, 2, 1>) -> Tensor<f32, 2, 2> {
    p1.max_unpool1d(p1i, PoolOptions::new((1, 2)), None)
}

#[morok::kernel]
fn k_max_unpool2d(
    u: Tensor<f32, 1, 2, 2, 2>,
    ui: Tensor<i64, 1, 2, 2, 2>,
) -> Tensor<f32, 1, 2, 5, 5> {
    u.max_unpool2d(ui, PoolOptions::new((2, 2)), Some((5, 5)))
}

#[morok::kernel]
fn k_max_unpool3d(
    p3: Tensor<f32, 1, 2, 2, 2, 2>,
    p3i: Tensor<i64, 1, 2, 2, 2, 2>,
) -> Tensor<f32, 1, 2, 4, 4, 4> {
    p3.max_unpool3d(p3i, Pool3dOptions::new((2, 2, 2)), None)
}

#[morok::kernel]
fn k_nll_loss(x: Tensor<f32, 2, 3>, l: Tensor<i64, 2>, y: Tensor<f32, 3>) -> Tensor<f32> {
    x.log_softmax(1).nll_loss(
        l,
        &ClassLossOptions {
            weight: Some(y),
            reduction: Reduction::Sum,
            ..Default::default()
        },
    )
}

#[morok::kernel]
fn k_cross_entropy_with(x: Tensor<f32, 2, 3>, t: Tensor<f32, 2, 3>) -> Tensor<f32, 2> {
    x.cross_entropy_with(
        t,
        &ClassLossOptions {
            label_smoothing: 0.1,
            reduction: Reduction::None,
            ..Default::default()
        },
    )
}

#[morok::kernel]
fn k_cat(x: Tensor<f32, 2, 3>, t: Tensor<f32, 2, 3>) -> Tensor<f32, 4, 3> {
    Tensor::cat([x, t], 0)
}

#[morok::kernel]
fn k_stack(x: Tensor<f32, 2, 3>, t: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 2, 3> {
    Tensor::stack([x, t], 1)
}

#[morok::kernel]
fn k_einsum(x: Tensor<f32, 2, 3>, w: Tensor<f32, 3, 4>) -> Tensor<f32, 4, 2> {
    Tensor::einsum("ij,jk->ki", [x, w])
}

#[morok::kernel]
fn k_index(m: Tensor<f32, 2, 1, 3>, ix4: Tensor<i64, 4>) -> Tensor<f32, 4, 1, 1> {
    m.index([
        Index::Tensor(ix4),
        Index::Slice(Slice::all().step(2)),
        Index::NewAxis,
        Index::Int(-1),
    ])
}

/// The embedded graph of `$kernel` built on `$args` computes `$api`'s
/// values (for ops whose graph holds host-made buffers, new per call).
macro_rules! same_values {
    ($aot:ident, [$($arg:ident),*], $api:expr) => {{
        let spec = $aot();
        let built = spec.graph.build(spec.sig, &[$(&$arg),*], &[], &[])?;
        let api: Tensor = $api;
        assert_eq!(
            built.to_vec::<f32>()?,
            api.to_vec::<f32>()?,
            "{}: the DSL's values differ from the Tensor API's",
            stringify!($aot)
        );
    }};
}

/// The embedded graph of `$kernel` built on `$args` is `$api`'s graph.
macro_rules! same_graph {
    ($aot:ident, [$($arg:ident),*], $api:expr) => {{
        let spec = $aot();
        let built = spec.graph.build(spec.sig, &[$(&$arg),*], &[], &[])?;
        let api: Tensor = $api;
        assert!(
            Arc::ptr_eq(&built.uop(), &api.uop()),
            "{}: the DSL's graph differs from the Tensor API's",
            stringify!($aot)
        );
    }};
}

fn input(dtype: ScalarType, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let values: Vec<f64> = (0..n).map(|i| (i as f64) * 0.25 - 0.5).collect();
    Tensor::from_vec(values, shape)
        .and_then(|t| t.cast(DType::scalar(dtype)))
        .expect("a valid input")
}

#[test]
fn every_op_builds_the_tensor_api_graph() -> morok::Result<()> {
    let x = input(ScalarType::F32, &[2, 3]);
    let y = input(ScalarType::F32, &[3]);
    let w = input(ScalarType::F32, &[3, 4]);
    let r = input(ScalarType::F32, &[1, 3]);
    let m = input(ScalarType::F32, &[2, 1, 3]);
    let c = input(ScalarType::F32, &[2, 3]).gt(0.0)?;
    let d = input(ScalarType::F32, &[3]).lt(0.0)?;
    let i = input(ScalarType::I32, &[2, 3]);
    let j = input(ScalarType::I32, &[3]);
    let x2 = input(ScalarType::F32, &[2, 3]).exp()?;
    let ix = Tensor::from_vec(vec![0i64, 2, 1, 1], &[2, 2])?;
    let ix4 = Tensor::from_vec(vec![0i64, 2, 1, 1], &[4])?;
    let s = input(ScalarType::F32, &[2, 2]);
    let l = Tensor::from_vec(vec![2i64, 0], &[2])?;
    let im = input(ScalarType::F32, &[1, 2, 5, 5]);
    let k = input(ScalarType::F32, &[3, 2, 3, 3]);
    let kb = input(ScalarType::F32, &[3]);
    let lw = input(ScalarType::F32, &[4, 3]);
    let vol = input(ScalarType::F32, &[1, 2, 4, 4, 4]);
    let sq = input(ScalarType::F32, &[1, 2, 7]);
    let q = input(ScalarType::F32, &[1, 2, 4, 3]);
    let kk = input(ScalarType::F32, &[1, 2, 5, 3]);
    let vv = input(ScalarType::F32, &[1, 2, 5, 6]);
    let k1 = input(ScalarType::F32, &[3, 2, 3]);
    let k3 = input(ScalarType::F32, &[3, 2, 2, 2, 2]);
    let t1 = input(ScalarType::F32, &[2, 3, 3]);
    let t2 = input(ScalarType::F32, &[2, 3, 2, 2]);
    let t3 = input(ScalarType::F32, &[2, 1, 1, 1, 1]);
    let lb = input(ScalarType::F32, &[4]);
    let (u, ui) = im.max_pool2d_with_indices(PoolOptions::new((2, 2)))?;
    let (p1, p1i) = x.max_pool1d_with_indices(PoolOptions::new((1, 2)))?;
    let (p3, p3i) = vol.max_pool3d_with_indices(Pool3dOptions::new((2, 2, 2)))?;

    same_graph!(__morok_aot_k_neg, [x], x.neg()?);
    same_graph!(__morok_aot_k_relu, [x], x.relu()?);
    same_graph!(__morok_aot_k_abs, [x], x.abs()?);
    same_graph!(__morok_aot_k_sign, [x], x.sign()?);
    same_graph!(__morok_aot_k_floor, [x], x.floor()?);
    same_graph!(__morok_aot_k_ceil, [x], x.ceil()?);
    same_graph!(__morok_aot_k_round, [x], x.round()?);
    same_graph!(__morok_aot_k_trunc, [x], x.trunc()?);
    same_graph!(__morok_aot_k_exp, [x], x.exp()?);
    same_graph!(__morok_aot_k_exp2, [x], x.exp2()?);
    same_graph!(__morok_aot_k_expm1, [x], x.expm1()?);
    same_graph!(__morok_aot_k_log, [x], x.log()?);
    same_graph!(__morok_aot_k_log2, [x], x.log2()?);
    same_graph!(__morok_aot_k_log10, [x], x.log10()?);
    same_graph!(__morok_aot_k_log1p, [x], x.log1p()?);
    same_graph!(__morok_aot_k_sqrt, [x], x.sqrt()?);
    same_graph!(__morok_aot_k_rsqrt, [x], x.rsqrt()?);
    same_graph!(__morok_aot_k_reciprocal, [x], x.reciprocal()?);
    same_graph!(__morok_aot_k_sin, [x], x.sin()?);
    same_graph!(__morok_aot_k_cos, [x], x.cos()?);
    same_graph!(__morok_aot_k_tan, [x], x.tan()?);
    same_graph!(__morok_aot_k_asin, [x], x.asin()?);
    same_graph!(__morok_aot_k_acos, [x], x.acos()?);
    same_graph!(__morok_aot_k_atan, [x], x.atan()?);
    same_graph!(__morok_aot_k_sinh, [x], x.sinh()?);
    same_graph!(__morok_aot_k_cosh, [x], x.cosh()?);
    same_graph!(__morok_aot_k_tanh, [x], x.tanh()?);
    same_graph!(__morok_aot_k_asinh, [x], x.asinh()?);
    same_graph!(__morok_aot_k_acosh, [x], x.acosh()?);
    same_graph!(__morok_aot_k_atanh, [x], x.atanh()?);
    same_graph!(__morok_aot_k_erf, [x], x.erf()?);
    same_graph!(__morok_aot_k_sigmoid, [x], x.sigmoid()?);
    same_graph!(__morok_aot_k_logsigmoid, [x], x.logsigmoid()?);
    same_graph!(__morok_aot_k_gelu, [x], x.gelu()?);
    same_graph!(__morok_aot_k_gelu_tanh, [x], x.gelu_tanh()?);
    same_graph!(__morok_aot_k_quick_gelu, [x], x.quick_gelu()?);
    same_graph!(__morok_aot_k_silu, [x], x.silu()?);
    same_graph!(__morok_aot_k_mish, [x], x.mish()?);
    same_graph!(__morok_aot_k_selu, [x], x.selu()?);
    same_graph!(__morok_aot_k_softsign, [x], x.softsign()?);
    same_graph!(__morok_aot_k_hardsigmoid, [x], x.hardsigmoid()?);
    same_graph!(__morok_aot_k_hardswish, [x], x.hardswish()?);
    same_graph!(__morok_aot_k_relu6, [x], x.relu6()?);
    same_graph!(__morok_aot_k_leaky_relu, [x], x.leaky_relu(0.01)?);
    same_graph!(__morok_aot_k_elu, [x], x.elu(1.0)?);
    same_graph!(__morok_aot_k_celu, [x], x.celu(0.5)?);
    same_graph!(__morok_aot_k_softplus, [x], x.softplus(1.0, 20.0)?);
    same_graph!(__morok_aot_k_hardtanh, [x], x.hardtanh(-1.0, 1.0)?);
    same_graph!(__morok_aot_k_isnan, [x], x.isnan()?);
    same_graph!(__morok_aot_k_isinf, [x], x.isinf()?);
    same_graph!(__morok_aot_k_isfinite, [x], x.isfinite()?);
    same_graph!(__morok_aot_k_isposinf, [x], x.isposinf()?);
    same_graph!(__morok_aot_k_isneginf, [x], x.isneginf()?);
    same_graph!(__morok_aot_k_logical_not, [c], c.logical_not()?);
    same_graph!(__morok_aot_k_bitwise_not, [i], i.bitwise_not()?);
    same_graph!(__morok_aot_k_add, [x, y], x.add(&y)?);
    same_graph!(__morok_aot_k_sub, [x, y], x.sub(&y)?);
    same_graph!(__morok_aot_k_mul, [x, y], x.mul(&y)?);
    same_graph!(__morok_aot_k_div, [x, y], x.div(&y)?);
    same_graph!(__morok_aot_k_floor_div, [x, y], x.floor_div(&y)?);
    same_graph!(__morok_aot_k_remainder, [x, y], x.remainder(&y)?);
    same_graph!(__morok_aot_k_fmod, [x, y], x.fmod(&y)?);
    same_graph!(__morok_aot_k_pow, [x, y], x.pow(&y)?);
    same_graph!(__morok_aot_k_maximum, [x, y], x.maximum(&y)?);
    same_graph!(__morok_aot_k_minimum, [x, y], x.minimum(&y)?);
    same_graph!(__morok_aot_k_atan2, [x, y], x.atan2(&y)?);
    same_graph!(__morok_aot_k_copysign, [x, y], x.copysign(&y)?);
    same_graph!(__morok_aot_k_logaddexp, [x, y], x.logaddexp(&y)?);
    same_graph!(__morok_aot_k_eq, [x, y], x.eq(&y)?);
    same_graph!(__morok_aot_k_ne, [x, y], x.ne(&y)?);
    same_graph!(__morok_aot_k_lt, [x, y], x.lt(&y)?);
    same_graph!(__morok_aot_k_le, [x, y], x.le(&y)?);
    same_graph!(__morok_aot_k_gt, [x, y], x.gt(&y)?);
    same_graph!(__morok_aot_k_ge, [x, y], x.ge(&y)?);
    same_graph!(__morok_aot_k_logical_and, [c, d], c.logical_and(&d)?);
    same_graph!(__morok_aot_k_logical_or, [c, d], c.logical_or(&d)?);
    same_graph!(__morok_aot_k_logical_xor, [c, d], c.logical_xor(&d)?);
    same_graph!(__morok_aot_k_bitwise_and, [i, j], i.bitwise_and(&j)?);
    same_graph!(__morok_aot_k_bitwise_or, [i, j], i.bitwise_or(&j)?);
    same_graph!(__morok_aot_k_bitwise_xor, [i, j], i.bitwise_xor(&j)?);
    same_graph!(__morok_aot_k_clamp, [x], x.clamp(-0.5, 0.5)?);
    same_graph!(__morok_aot_k_where_, [c, x], c.where_(&x, 0.0)?);
    same_graph!(__morok_aot_k_cast, [x], x.cast(DType::F16)?);
    same_graph!(__morok_aot_k_sum, [x], x.sum(Some(&[1]), false)?);
    same_graph!(__morok_aot_k_prod, [x], x.prod(Some(&[1]), false)?);
    same_graph!(__morok_aot_k_mean, [x], x.mean(Some(&[1]), false)?);
    same_graph!(__morok_aot_k_max, [x], x.max(Some(&[1]), false)?);
    same_graph!(__morok_aot_k_min, [x], x.min(Some(&[1]), false)?);
    same_graph!(
        __morok_aot_k_logsumexp,
        [x],
        x.logsumexp(Some(&[1]), false)?
    );
    same_graph!(__morok_aot_k_any, [c], c.any(Some(&[1]), true)?);
    same_graph!(__morok_aot_k_all, [c], c.all(Some(&[1]), true)?);
    same_graph!(__morok_aot_k_var, [x], x.var(Some(&[1]), 1, false)?);
    same_graph!(__morok_aot_k_std, [x], x.std(Some(&[1]), 1, false)?);
    same_graph!(__morok_aot_k_argmax, [x], x.argmax(Some(1))?);
    same_graph!(__morok_aot_k_argmin, [x], x.argmin(Some(1))?);
    same_graph!(__morok_aot_k_softmax, [x], x.softmax(-1)?);
    same_graph!(__morok_aot_k_log_softmax, [x], x.log_softmax(-1)?);
    same_graph!(__morok_aot_k_softmin, [x], x.softmin(-1)?);
    same_graph!(__morok_aot_k_cumsum, [x], x.cumsum(-1)?);
    same_graph!(__morok_aot_k_cumprod, [x], x.cumprod(-1)?);
    same_graph!(__morok_aot_k_logcumsumexp, [x], x.logcumsumexp(-1)?);
    same_graph!(__morok_aot_k_gather, [x, ix], x.gather(1, &ix)?);
    same_graph!(
        __morok_aot_k_index_select,
        [x, ix4],
        x.index_select(1, &ix4)?
    );
    same_graph!(__morok_aot_k_masked_fill, [x, d], x.masked_fill(&d, 0.5)?);
    same_graph!(__morok_aot_k_one_hot, [i], i.one_hot(4)?);
    same_graph!(
        __morok_aot_k_mse_loss,
        [x, x2],
        x.mse_loss(&x2, Reduction::Mean)?
    );
    same_graph!(
        __morok_aot_k_l1_loss,
        [x, x2],
        x.l1_loss(&x2, Reduction::None)?
    );
    same_graph!(__morok_aot_k_sort, [x], x.sort(1, true)?.0);
    same_graph!(__morok_aot_k_argsort, [x], x.argsort(-1, false)?);
    same_graph!(__morok_aot_k_topk, [x], x.topk(2, 1, true)?.1);
    same_graph!(__morok_aot_k_cummax, [x], x.cummax(1)?.1);
    same_graph!(__morok_aot_k_cummin, [x], x.cummin(0)?.0);
    same_graph!(
        __morok_aot_k_var_mean,
        [x],
        x.var_mean(Some(&[1]), 1, false)?.0
    );
    same_graph!(
        __morok_aot_k_std_mean,
        [x],
        x.std_mean(Some(&[0]), 0, true)?.1
    );
    same_graph!(
        __morok_aot_k_layernorm,
        [x],
        x.layernorm(&[-1], None, None, 0.00001)?
    );
    same_graph!(__morok_aot_k_tril, [x], x.tril(0)?);
    same_graph!(__morok_aot_k_triu, [x], x.triu(0)?);
    same_graph!(__morok_aot_k_matmul, [x, w], x.matmul(&w)?);
    same_graph!(__morok_aot_k_dot, [x, w], x.dot(&w)?);
    same_graph!(__morok_aot_k_reshape, [x], x.reshape(&[3, -1])?);
    same_graph!(__morok_aot_k_expand, [r], r.expand(&[2, -1])?);
    same_graph!(__morok_aot_k_transpose, [x], x.transpose(0, 1)?);
    same_graph!(__morok_aot_k_permute, [x], x.permute(&[1, 0])?);
    same_graph!(__morok_aot_k_flip, [x], x.flip(&[0, -1])?);
    same_graph!(__morok_aot_k_squeeze, [m], m.squeeze(1)?);
    same_graph!(__morok_aot_k_squeeze_all, [m], m.squeeze_all()?);
    same_graph!(__morok_aot_k_unflatten, [x], x.unflatten(1, &[-1, 1])?);
    same_graph!(
        __morok_aot_k_normalize,
        [x],
        x.normalize(2.0, -1, 0.000001)?
    );
    same_graph!(__morok_aot_k_unsqueeze, [x], x.unsqueeze(1)?);
    same_graph!(__morok_aot_k_flatten, [m], m.flatten(1, 2)?);
    same_graph!(__morok_aot_k_repeat, [x], x.repeat(&[2, 1])?);
    same_graph!(__morok_aot_k_pad, [x], x.pad(&[(1, 0), (-1, 2)], 0.5)?);
    same_graph!(__morok_aot_k_shrink, [x], x.shrink(&[(1, 2), (0, 2)])?);
    same_graph!(__morok_aot_k_roll, [x], x.roll(&[1, -2], &[0, 1])?);
    same_graph!(__morok_aot_k_diagonal, [m], m.diagonal(1, 0, -1)?);
    same_graph!(__morok_aot_k_unfold, [x], x.unfold(1, 2, 1)?);
    same_graph!(
        __morok_aot_k_repeat_interleave,
        [x],
        x.repeat_interleave(2, Some(-1))?
    );
    same_graph!(__morok_aot_k_scatter, [x, ix, s], x.scatter(1, &ix, &s)?);
    same_graph!(
        __morok_aot_k_scatter_add,
        [x, ix, s],
        x.scatter_add(1, &ix, &s)?
    );
    same_graph!(__morok_aot_k_cross_entropy, [x, l], x.cross_entropy(&l)?);
    same_graph!(
        __morok_aot_k_conv2d,
        [im, k, kb],
        im.conv2d(
            &k,
            Some(&kb),
            ConvOptions {
                stride: (2, 1),
                padding: Pads([(1, 0), (0, 2)]),
                ..Default::default()
            }
        )?
    );
    same_graph!(
        __morok_aot_k_max_pool2d,
        [im],
        im.max_pool2d(PoolOptions::new((2, 2)).ceil_mode(true))?
    );
    same_graph!(
        __morok_aot_k_avg_pool2d,
        [im],
        im.avg_pool2d(
            PoolOptions::new((3, 3))
                .stride((1, 1))
                .padding(1)
                .count_include_pad(false)
        )?
    );
    same_graph!(
        __morok_aot_k_max_pool1d,
        [x],
        x.max_pool1d(PoolOptions::new((1, 2)))?
    );
    same_graph!(
        __morok_aot_k_avg_pool1d,
        [x],
        x.avg_pool1d(PoolOptions::new((1, 2)).stride((1, 1)))?
    );
    same_graph!(
        __morok_aot_k_slice,
        [x],
        x.slice(&[Slice::from(-1), Slice::all().step(2)])?
    );
    same_values!(
        __morok_aot_k_interpolate,
        [im],
        im.interpolate(&[3, 7], InterpolateMode::Bilinear, false)?
    );
    same_graph!(
        __morok_aot_k_bitwise_left_shift,
        [i, j],
        i.bitwise_left_shift(&j)?
    );
    same_graph!(
        __morok_aot_k_bitwise_right_shift,
        [i],
        i.bitwise_right_shift(1)?
    );
    same_graph!(__morok_aot_k_full_like, [x], x.full_like(0.5)?);
    same_graph!(__morok_aot_k_zeros_like, [x], x.zeros_like()?);
    same_graph!(__morok_aot_k_ones_like, [i], i.ones_like()?);
    same_graph!(__morok_aot_k_contiguous, [x], x.contiguous()?);
    same_graph!(
        __morok_aot_k_sum_dtype,
        [i],
        i.sum_dtype(Some(&[1]), true, DType::F64)?
    );
    same_graph!(
        __morok_aot_k_prod_dtype,
        [i],
        i.prod_dtype(Some(&[0]), false, DType::I64)?
    );
    same_graph!(__morok_aot_k_linear, [x, lw, lb], x.linear(&lw, Some(&lb))?);
    same_graph!(__morok_aot_k_diag, [y], y.diag(-1)?);
    same_graph!(
        __morok_aot_k_max_pool3d,
        [vol],
        vol.max_pool3d(Pool3dOptions::new((2, 2, 2)))?
    );
    same_graph!(
        __morok_aot_k_avg_pool3d,
        [vol],
        vol.avg_pool3d(Pool3dOptions::new((3, 3, 3)).stride((1, 1, 1)).padding(1))?
    );
    same_graph!(
        __morok_aot_k_max_pool1d_with_indices,
        [x],
        x.max_pool1d_with_indices(PoolOptions::new((1, 2)))?.1
    );
    same_graph!(
        __morok_aot_k_max_pool2d_with_indices,
        [im],
        im.max_pool2d_with_indices(PoolOptions::new((2, 2)))?.0
    );
    same_graph!(
        __morok_aot_k_max_pool3d_with_indices,
        [vol],
        vol.max_pool3d_with_indices(Pool3dOptions::new((2, 2, 2)))?
            .1
    );
    same_graph!(__morok_aot_k_broadcast_to, [y], y.broadcast_to(&[2, 3])?);
    same_graph!(
        __morok_aot_k_smooth_l1_loss,
        [x, x2],
        x.smooth_l1_loss(&x2, Reduction::Sum, 0.5)?
    );
    same_graph!(
        __morok_aot_k_conv1d,
        [sq, k1],
        sq.conv1d(
            &k1,
            None,
            Conv1dOptions {
                stride: 2,
                ..Default::default()
            }
        )?
    );
    same_graph!(
        __morok_aot_k_conv3d,
        [vol, k3],
        vol.conv3d(
            &k3,
            None,
            Conv3dOptions {
                padding: Pads([(1, 0), (0, 0), (0, 0)]),
                ..Default::default()
            }
        )?
    );
    same_graph!(
        __morok_aot_k_conv_transpose1d,
        [sq, t1],
        sq.conv_transpose1d(&t1, None, ConvTransposeOptions::default())?
    );
    same_graph!(
        __morok_aot_k_conv_transpose2d,
        [im, t2, kb],
        im.conv_transpose2d(
            &t2,
            Some(&kb),
            ConvTransposeOptions {
                stride: (2, 2),
                ..Default::default()
            }
        )?
    );
    same_graph!(
        __morok_aot_k_conv_transpose3d,
        [vol, t3],
        vol.conv_transpose3d(&t3, None, ConvTranspose3dOptions::default())?
    );
    same_graph!(
        __morok_aot_k_isclose,
        [x, y],
        x.isclose(
            &y,
            IsCloseOptions {
                rtol: 0.1,
                ..Default::default()
            }
        )?
    );
    same_graph!(
        __morok_aot_k_scaled_dot_product_attention,
        [q, kk, vv],
        q.scaled_dot_product_attention(
            &kk,
            &vv,
            &AttentionOptions {
                is_causal: true,
                ..Default::default()
            }
        )?
    );
    same_graph!(
        __morok_aot_k_scatter_reduce,
        [x, ix, s],
        x.scatter_reduce(1, &ix, &s, ScatterReduce::Amax, false)?
    );
    same_graph!(
        __morok_aot_k_pad_mode,
        [x],
        x.pad_mode(&[(0, 0), (2, 0)], PadMode::Reflect)?
    );
    same_graph!(
        __morok_aot_k_binary_cross_entropy,
        [x, x2, y],
        x.sigmoid()?
            .binary_cross_entropy(&x2, Some(&y), Reduction::Mean)?
    );
    same_graph!(
        __morok_aot_k_binary_cross_entropy_with_logits,
        [x, x2, y],
        x.binary_cross_entropy_with_logits(&x2, None, Some(&y), Reduction::None)?
    );
    same_graph!(
        __morok_aot_k_scatter_value,
        [x, ix],
        x.scatter_value(1, &ix, 0.5f64)?
    );
    same_graph!(__morok_aot_k_lerp, [x, x2, y], x.lerp(&x2, y.clone())?);
    same_graph!(__morok_aot_k_bitcast, [x], x.bitcast(DType::I32)?);
    same_graph!(
        __morok_aot_k_div_mode,
        [x, y],
        x.div_mode(&y, RoundingMode::Floor)?
    );
    same_values!(
        __morok_aot_k_interpolate_scale,
        [im],
        im.interpolate_scale(&[2.0, 1.5], InterpolateMode::Bilinear, false)?
    );
    same_graph!(
        __morok_aot_k_max_unpool1d,
        [p1, p1i],
        p1.max_unpool1d(&p1i, PoolOptions::new((1, 2)), None)?
    );
    same_graph!(
        __morok_aot_k_max_unpool2d,
        [u, ui],
        u.max_unpool2d(&ui, PoolOptions::new((2, 2)), Some((5, 5)))?
    );
    same_graph!(
        __morok_aot_k_max_unpool3d,
        [p3, p3i],
        p3.max_unpool3d(&p3i, Pool3dOptions::new((2, 2, 2)), None)?
    );
    same_graph!(
        __morok_aot_k_nll_loss,
        [x, l, y],
        x.log_softmax(1)?.nll_loss(
            &l,
            &ClassLossOptions {
                weight: Some(y.clone()),
                reduction: Reduction::Sum,
                ..Default::default()
            }
        )?
    );
    same_graph!(
        __morok_aot_k_cross_entropy_with,
        [x, x2],
        x.cross_entropy_with(
            &x2,
            &ClassLossOptions {
                label_smoothing: 0.1,
                reduction: Reduction::None,
                ..Default::default()
            }
        )?
    );
    same_graph!(__morok_aot_k_cat, [x, x2], Tensor::cat(&[&x, &x2], 0)?);
    same_graph!(__morok_aot_k_stack, [x, x2], Tensor::stack(&[&x, &x2], 1)?);
    same_graph!(
        __morok_aot_k_einsum,
        [x, w],
        Tensor::einsum("ij,jk->ki", &[&x, &w])?
    );
    same_graph!(
        __morok_aot_k_index,
        [m, ix4],
        m.index(&[
            Index::Tensor(ix4.clone()),
            Index::Slice(Slice::all().step(2)),
            Index::NewAxis,
            Index::Int(-1)
        ])?
    );
    Ok(())
}

#[test]
fn every_entry_of_the_table_has_a_kernel_here() {
    let source = include_str!("dsl_ops.rs");
    let missing: Vec<&str> = OPS
        .iter()
        .map(|s| s.name)
        .filter(|name| !source.contains(&format!("fn k_{name}(")))
        .collect();
    assert!(
        missing.is_empty(),
        "ops without a DSL kernel here: {missing:?}"
    );
}
