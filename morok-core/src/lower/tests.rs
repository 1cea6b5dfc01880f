//! Structural tests of lowering (the CPU backend's tests run the results).

use super::*;
use crate::caps::Caps;
use crate::dtype::DType;
use crate::sample_kernels::store;
pub(crate) use crate::sample_kernels::{load, matmul, range};
use crate::uop::{AxisType, Op, ReduceOp, UOp};

fn opts() -> LowerOptions {
    LowerOptions::new(Caps::all_native())
}

/// The loop nesting of a program as a string: `(` per RANGE, `)` per END,
/// `S` per global store, `R` per register store, `=` per register read.
fn shape(k: &LoweredKernel) -> String {
    k.ops
        .iter()
        .filter_map(|u| match u.op() {
            Op::Range => Some('('),
            Op::End => Some(')'),
            Op::Store if u.s(0).s(0).op() == Op::DefineGlobal => Some('S'),
            Op::Store => Some('R'),
            Op::Load if u.s(0).s(0).op() != Op::DefineGlobal => Some('='),
            _ => None,
        })
        .collect()
}

#[test]
fn matmul_nests_the_reduce_inside_the_output_loops() {
    let k = lower(&matmul(4, 5, 3), &opts()).unwrap();
    // init, loop(read, update), read after the loop, store.
    assert_eq!(shape(&k), "((R(=R)=S))");
    assert_eq!(k.index_dtype, DType::I32);
    let first_range = k.ops.iter().position(|u| u.op() == Op::Range).unwrap();
    let reg = k.ops.iter().position(|u| u.op() == Op::DefineReg).unwrap();
    assert!(reg < first_range, "registers are defined before the loops");
    let p = k.parallel.as_ref().expect("the output loop is parallel");
    assert_eq!(p.size, 4);
    assert!(Arc::ptr_eq(&p.range, &k.ops[first_range]));
    assert_eq!(k.buffers.len(), 3);
    assert!(k.buffers[0].written && !k.buffers[0].read);
    assert_eq!(k.buffers[1].access, Some((0, 19)));
    assert_eq!(k.buffers[2].access, Some((0, 14)));
    assert_eq!(k.buffers[0].access, Some((0, 11)));
}

#[test]
fn loop_invariant_reduces_are_hoisted_and_ranges_balance() {
    // out[i] = x[i] + sum_k x[k]: the sum does not depend on i.
    let i = range(6, 0, AxisType::Loop);
    let r = range(6, 1, AxisType::Reduce);
    let s = load(1, &r).reduce(ReduceOp::Add, std::slice::from_ref(&r));
    let st = store(0, &i, &load(1, &i).add(&s));
    let k = lower(&UOp::sink(vec![st.end(std::slice::from_ref(&i))]), &opts()).unwrap();
    assert_eq!(shape(&k), "R(=R)=(S)");
}

#[test]
fn two_reduces_in_one_kernel() {
    // out[i] = max_k x[i,k] + sum_m x[i,m]
    let i = range(3, 0, AxisType::Loop);
    let a = range(4, 1, AxisType::Reduce);
    let b = range(4, 2, AxisType::Reduce);
    let row = |r: &Arc<UOp>| load(1, &i.mul(&UOp::index(4)).add(r));
    let v = row(&a)
        .reduce(ReduceOp::Max, std::slice::from_ref(&a))
        .add(&row(&b).reduce(ReduceOp::Add, std::slice::from_ref(&b)));
    let st = store(0, &i, &v);
    let k = lower(&UOp::sink(vec![st.end(std::slice::from_ref(&i))]), &opts()).unwrap();
    let s = shape(&k);
    // Inside the output loop: two initialisations, two reduce loops
    // (read, update) and two reads, in some valid order, then the store.
    assert_eq!(s.matches('(').count(), 3, "{s}");
    assert_eq!(s.matches("(=R)").count(), 2, "{s}");
    assert!(s.starts_with("(R") && s.ends_with("=S)"), "{s}");
    assert_eq!(s.matches('R').count(), 4, "{s}");
}

#[test]
fn gated_stores_become_if_blocks() {
    let i = range(4, 0, AxisType::Loop);
    let gate = i.bin(Op::CmpLt, &UOp::index(2));
    let st = UOp::define_global(0, DType::F32)
        .index_into(&i, Some(&gate))
        .store(&load(1, &i));
    let k = lower(&UOp::sink(vec![st.end(std::slice::from_ref(&i))]), &opts()).unwrap();
    let ops: Vec<Op> = k.ops.iter().map(|u| u.op()).collect();
    let at = ops.iter().position(|o| *o == Op::If).expect("an IF");
    assert_eq!(&ops[at..at + 4], &[Op::If, Op::Index, Op::Store, Op::EndIf]);
    assert_eq!(
        k.ops[at + 2].s(0).src().len(),
        2,
        "the store inside is ungated"
    );
    // The gate narrows the access range to the elements actually written.
    assert_eq!(k.buffers[0].access, Some((0, 1)));
}

/// A gate over several ranges bounds each of them: `4·i + k < 8` with
/// `k < 4` means `i <= 1`, so the load at `2·k + i` reads elements 0..=7
/// only (the first half of a `cat` of a transposed `[2, 4]` tensor, read
/// by a matmul; found by the graph fuzzer, where the kernel was refused
/// for reading past its 8-element input).
#[test]
fn a_gate_over_several_ranges_bounds_each_range() {
    let i = range(4, 0, AxisType::Loop);
    let k = range(4, 1, AxisType::Loop);
    let gate = i.mul(&UOp::index(4)).add(&k).bin(Op::CmpLt, &UOp::index(8));
    let idx = k.mul(&UOp::index(2)).add(&i);
    let v = UOp::define_global(1, DType::F32)
        .index_into(&idx, Some(&gate))
        .load();
    let st = store(0, &i.mul(&UOp::index(4)).add(&k), &v);
    let lowered = lower(&UOp::sink(vec![st.end(&[i, k])]), &opts()).unwrap();
    assert_eq!(lowered.buffers[1].access, Some((0, 7)));
}

/// Nested gate constraints bound the difference of their forms:
/// `3·(r + s) + t + u < 6` and `t + u < 2` give `r + s <= 1`, so the load
/// at `2·(r + s) + t + u` reads elements 0..=3 (a 2×2 max-pool of a
/// zero-padded 2×2 input; the kernel was refused for reading 0..=5).
#[test]
fn nested_gate_constraints_bound_their_difference() {
    let [r, s, t, u] = [0, 1, 2, 3].map(|a| range(2, a, AxisType::Loop));
    let rs = r.add(&s);
    let tu = t.add(&u);
    let gate = rs
        .mul(&UOp::index(3))
        .add(&tu)
        .bin(Op::CmpLt, &UOp::index(6))
        .bin(Op::And, &tu.bin(Op::CmpLt, &UOp::index(2)));
    let idx = rs.mul(&UOp::index(2)).add(&tu);
    let v = UOp::define_global(1, DType::F32)
        .index_into(&idx, Some(&gate))
        .load();
    let out = r
        .mul(&UOp::index(8))
        .add(&s.mul(&UOp::index(4)))
        .add(&t.mul(&UOp::index(2)))
        .add(&u);
    let st = store(0, &out, &v);
    let lowered = lower(&UOp::sink(vec![st.end(&[r, s, t, u])]), &opts()).unwrap();
    assert_eq!(lowered.buffers[1].access, Some((0, 3)));
}

/// Lowers `ast` without the symbolic pass, so only the access bounds
/// can prove what a test asks.
fn lower_unsimplified(ast: &Arc<UOp>) -> LoweredKernel {
    let mut o = opts();
    o.noopt = true;
    lower(ast, &o).unwrap()
}

/// A gate on `r // 3` bounds an index linear in `r`: `5 < r // 3` means
/// `r >= 18`, so `143 - 4·r` reads elements 0..=71 of a 72-element
/// buffer (graph 649 of the fuzzer at 2,500 graphs: the flipped second
/// half of a `cat`, refused for reading 0..=143).
#[test]
fn a_gate_on_a_quotient_bounds_an_index_of_its_dividend() {
    let r = range(36, 0, AxisType::Loop);
    let gate = UOp::index(5).bin(Op::CmpLt, &r.bin(Op::Idiv, &UOp::index(3)));
    let idx = UOp::index(143).sub(&r.mul(&UOp::index(4)));
    let v = UOp::define_global(1, DType::F32)
        .index_into(&idx, Some(&gate))
        .load();
    let ast = UOp::sink(vec![store(0, &r, &v).end(&[r])]);
    assert_eq!(lower_unsimplified(&ast).buffers[1].access, Some((3, 71)));
    assert_eq!(
        lower(&ast, &opts()).unwrap().buffers[1].access,
        Some((3, 71))
    );
}

/// A gate on `r % 3` bounds an index linear in `r`: under `1 < r % 3`,
/// `6·r + k - 12` is not negative, so its `% 18` reads elements 0..=17 by
/// the intervals; the loops being small, every assignment is evaluated
/// and the exact range is 0..=5 (`r` is 2 or 5, and both give `k`)
/// (graph 758 of the fuzzer at 2,500 graphs: a cumsum whose output
/// ranges were merged, refused for reading -12..=17).
#[test]
fn a_gate_on_a_remainder_bounds_an_index_of_its_dividend() {
    let r = range(6, 0, AxisType::Loop);
    let k = range(6, 1, AxisType::Loop);
    let gate = UOp::index(1).bin(Op::CmpLt, &r.bin(Op::Mod, &UOp::index(3)));
    let idx = r
        .mul(&UOp::index(6))
        .add(&k)
        .add(&UOp::index(-12))
        .bin(Op::Mod, &UOp::index(18));
    let v = UOp::define_global(1, DType::F32)
        .index_into(&idx, Some(&gate))
        .load();
    let out = r.mul(&UOp::index(6)).add(&k);
    let ast = UOp::sink(vec![store(0, &out, &v).end(&[r, k])]);
    assert_eq!(lower_unsimplified(&ast).buffers[1].access, Some((0, 5)));
    let (lo, hi) = lower(&ast, &opts()).unwrap().buffers[1].access.unwrap();
    assert!(lo >= 0 && hi <= 5, "{lo}..={hi}");
}

/// The gated read of the backward of `cumsum` along a leading axis (a
/// `[3, 5]` input; `a`, `b` its output counters, `k` the window's), as
/// rangeify builds it: `p = 20·b + 5·k + a + 2` walks the padded,
/// transposed windows, `q = 18·(p // 20) + p % 20` and
/// `w = 3·(q // 18) + q % 6` re-view it, and the read is element
/// `5·(w % 3) + w // 3` under `p % 20 < 18` and `q % 6 < 3`. The ungated
/// rules split `w % 3` and `(q % 6) // 3` into forms of `a + 2·k + 2`
/// that the access bounds cannot relate to the gate (refused for reading
/// 0..=15 of 15 elements); simplified under the gate (`q % 6` in
/// `[0, 2]`, `p % 20` in `[0, 17]`) the index is `5·(q % 6) + b`, equal
/// wherever the gate holds and bounded by it.
#[test]
fn a_windowed_read_is_simplified_under_its_gate_and_bounded() {
    use crate::rewrite::graph_rewrite;
    use crate::symbolic::interp::evaluate;
    use crate::uop::ConstValue;
    use std::collections::HashMap;
    let a = range(3, 0, AxisType::Loop);
    let b = range(5, 1, AxisType::Loop);
    let k = range(4, 2, AxisType::Reduce);
    let c = UOp::index;
    let p = b.mul(&c(20)).add(&k.mul(&c(5))).add(&a).add(&c(2));
    let q = p
        .bin(Op::Idiv, &c(20))
        .mul(&c(18))
        .add(&p.bin(Op::Mod, &c(20)));
    let w = q
        .bin(Op::Idiv, &c(18))
        .mul(&c(3))
        .add(&q.bin(Op::Mod, &c(6)));
    let idx = w
        .bin(Op::Mod, &c(3))
        .mul(&c(5))
        .add(&w.bin(Op::Idiv, &c(3)));
    let gate = p
        .bin(Op::Mod, &c(20))
        .bin(Op::CmpLt, &c(18))
        .bin(Op::And, &q.bin(Op::Mod, &c(6)).bin(Op::CmpLt, &c(3)));
    let read = UOp::define_global(1, DType::F32).index_into(&idx, Some(&gate));
    let v = read.load().reduce(ReduceOp::Add, std::slice::from_ref(&k));
    let out = a.mul(&c(5)).add(&b);
    let ast = UOp::sink(vec![store(0, &out, &v).end(&[a.clone(), b.clone()])]);
    let ast = graph_rewrite(&crate::schedule::simplify_rules(), &ast, &mut ()).unwrap();
    let reads: Vec<Arc<UOp>> = ast
        .toposort()
        .into_iter()
        .filter(|n| n.op() == Op::Index && n.s(0).arg() == &crate::uop::Arg::Int(1))
        .collect();
    let [new] = reads.as_slice() else {
        panic!("one read expected: {reads:?}");
    };
    let (new_idx, new_gate) = (new.s(1), new.s(2));
    let mut reached = 0;
    for (va, vb, vk) in
        (0..3).flat_map(|x| (0..5).flat_map(move |y| (0..4).map(move |z| (x, y, z))))
    {
        let leaves: HashMap<u64, ConstValue> = [(&a, va), (&b, vb), (&k, vk)]
            .into_iter()
            .map(|(r, v)| (r.id(), ConstValue::Int(v)))
            .collect();
        let at = |n: &Arc<UOp>| evaluate(n, &leaves).unwrap()[0];
        assert_eq!(at(&gate), at(new_gate), "gate at a={va} b={vb} k={vk}");
        if at(&gate).truthy() {
            reached += 1;
            assert_eq!(at(&idx), at(new_idx), "index at a={va} b={vb} k={vk}");
        }
    }
    // Output row `a` sums rows `a..3` of its column: 3 + 2 + 1 reads.
    assert_eq!(reached, 5 * 6);
    for noopt in [true, false] {
        let mut o = opts();
        o.noopt = noopt;
        let (lo, hi) = lower(&ast, &o).unwrap().buffers[1].access.unwrap();
        assert!(lo >= 0 && hi <= 14, "noopt {noopt}: {lo}..={hi}");
    }
}

/// A gate folded to `false` accesses nothing, whatever its index (graph
/// 1844 of the fuzzer at 2,500 graphs: `(r < 1) & (0 < r)` folds to
/// false once complementary comparisons are recognized, and the kernel
/// was refused for reading -4..=18 of 8 elements).
#[test]
fn a_false_gate_accesses_nothing() {
    let r = range(3, 0, AxisType::Loop);
    let idx = r.mul(&UOp::index(8)).add(&UOp::index(-4));
    let v = UOp::define_global(1, DType::F32)
        .index_into(&idx, Some(&UOp::bool_(false)))
        .load();
    let ast = UOp::sink(vec![store(0, &r, &v).end(&[r])]);
    let k = lower_unsimplified(&ast);
    assert!(k.buffers[1].read);
    assert_eq!(k.buffers[1].access, None);
}

#[test]
fn index_type_is_i64_when_an_index_may_not_fit_i32() {
    let i = range(3, 0, AxisType::Loop);
    let idx = i.mul(&UOp::index(1 << 40));
    let st = store(0, &idx, &load(1, &i));
    let k = lower(&UOp::sink(vec![st.end(std::slice::from_ref(&i))]), &opts()).unwrap();
    assert_eq!(k.index_dtype, DType::I64);
    assert!(k.ops.iter().all(|u| u.dtype() != DType::INDEX));
    let mul = k
        .ops
        .iter()
        .find(|u| u.op() == Op::Mul)
        .expect("index multiply");
    assert_eq!(mul.dtype(), DType::I64);
    assert!(k.no_overflow.contains(&mul.id()));
}

#[test]
fn decompositions_follow_the_capabilities() {
    let i = range(2, 0, AxisType::Loop);
    let st = store(0, &i, &load(1, &i).un(Op::Exp));
    let ast = UOp::sink(vec![st.end(std::slice::from_ref(&i))]);
    let has_exp = |k: &LoweredKernel| k.ops.iter().any(|u| u.op() == Op::Exp);
    assert!(has_exp(&lower(&ast, &opts()).unwrap()));
    let none = LowerOptions::new(Caps::none_native());
    assert!(!has_exp(&lower(&ast, &none).unwrap()));
    // Threefry and IsNan never reach a renderer.
    let x = UOp::define_global(1, DType::U64)
        .index_into(&i, None)
        .load();
    let st = UOp::define_global(0, DType::U64)
        .index_into(&i, None)
        .store(&x.bin(Op::Threefry, &x));
    let k = lower(&UOp::sink(vec![st.end(std::slice::from_ref(&i))]), &opts()).unwrap();
    assert!(k.ops.iter().all(|u| u.op() != Op::Threefry));
}

#[test]
fn kernels_that_read_their_output_are_not_parallel() {
    let i = range(4, 0, AxisType::Loop);
    let st = store(0, &i, &load(0, &i).add(&load(1, &i)));
    let k = lower(&UOp::sink(vec![st.end(std::slice::from_ref(&i))]), &opts()).unwrap();
    assert!(k.parallel.is_none());
    assert!(k.buffers[0].read && k.buffers[0].written);
}

#[test]
fn malformed_asts_are_errors() {
    let i = range(4, 0, AxisType::Loop);
    let r = range(4, 1, AxisType::Reduce);
    let msg = |ast: &Arc<UOp>| lower(ast, &opts()).unwrap_err().to_string();
    // Not a SINK.
    assert!(msg(&load(1, &i)).contains("root must be a SINK"));
    // Stored dtype differs from the buffer's.
    let bad = UOp::define_global(0, DType::I32)
        .index_into(&i, None)
        .store(&load(1, &i));
    assert!(msg(&UOp::sink(vec![bad.end(std::slice::from_ref(&i))])).contains("dtype"));
    // A range used but never closed.
    let open = store(0, &i.add(&r), &load(1, &i));
    assert!(msg(&UOp::sink(vec![open.end(std::slice::from_ref(&i))])).contains("not closed"));
    // A tensor-level op inside a kernel.
    let c = UOp::new(
        Op::Contiguous,
        DType::F32,
        vec![load(1, &i)],
        crate::uop::Arg::None,
    );
    assert!(msg(&UOp::sink(vec![
        store(0, &i, &c).end(std::slice::from_ref(&i))
    ]))
    .contains("not allowed"));
    // Slots must be dense.
    let gap = store(2, &i, &load(1, &i));
    assert!(msg(&UOp::sink(vec![gap.end(std::slice::from_ref(&i))])).contains("slot 0"));
}

#[test]
fn reduces_sharing_a_range_get_loops_of_their_own() {
    // out[i] = sum_k exp(x[i,k] - max_k x[i,k]) with ONE range node k.
    let i = range(3, 0, AxisType::Loop);
    let k = range(4, 1, AxisType::Reduce);
    let x = load(1, &i.mul(&UOp::index(4)).add(&k));
    let mx = x.reduce(ReduceOp::Max, std::slice::from_ref(&k));
    let v = x
        .bin(Op::Sub, &mx)
        .un(Op::Exp)
        .reduce(ReduceOp::Add, std::slice::from_ref(&k));
    let st = store(0, &i, &v);
    let k = lower(&UOp::sink(vec![st.end(std::slice::from_ref(&i))]), &opts()).unwrap();
    let s = shape(&k);
    assert_eq!(s.matches("(=R)").count(), 2, "{s}");
}
