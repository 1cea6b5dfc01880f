//! Throughput of symbolic simplification on a large index expression.
//!
//! The expression chains ~700 steps of the index arithmetic rangeify and
//! lowering produce — `(s*4 + y) // 4`, `(u*8 + z) % 8`, `// 1`, `* 0`,
//! modulo by a bound, constant offsets — each step using the previous
//! result twice, so the graph shares subexpressions heavily (about 10,000
//! distinct nodes). Every iteration simplifies a freshly built graph (new
//! variable names, so no node and no cached bound is reused), and the
//! figure is reported in graph nodes per second.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use morok_core::simplify;
use morok_core::{Arg, DType, Op, UOp};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn var(name: String, min: i64, max: i64) -> Arc<UOp> {
    UOp::new(
        Op::DefineVar,
        DType::INDEX,
        Vec::new(),
        Arg::Var { name, min, max },
    )
}

/// Builds the benchmark expression; `tag` makes its variables unique.
fn build(steps: usize, tag: usize) -> Arc<UOp> {
    let x = var(format!("x{tag}"), 0, 255);
    let y = var(format!("y{tag}"), 0, 3);
    let z = var(format!("z{tag}"), 0, 7);
    let c = |v: i64| UOp::index(v);
    let mut acc = x;
    for i in 0..steps {
        let s = acc.bin(Op::Mod, &c(1024 + i as i64));
        let u = s.mul(&c(4)).add(&y).bin(Op::Idiv, &c(4));
        let v = u.mul(&c(8)).add(&z).bin(Op::Mod, &c(8));
        let w = u.bin(Op::Idiv, &c(1)).add(&v.mul(&c(0))).add(&s);
        acc = w.add(&c(i as i64 % 7)).add(&v);
    }
    acc
}

fn bench(crit: &mut Criterion) {
    const STEPS: usize = 700;
    let nodes = build(STEPS, 0).node_count();
    let simplified = simplify(&build(STEPS, 0)).expect("converges").node_count();
    eprintln!("rewrite bench: {nodes} nodes, {simplified} after simplification");
    let tag = AtomicUsize::new(1);
    let mut group = crit.benchmark_group("symbolic");
    group.throughput(Throughput::Elements(nodes as u64));
    group.sample_size(10);
    group.bench_function("simplify_index_expr", |b| {
        b.iter_batched(
            || build(STEPS, tag.fetch_add(1, Ordering::Relaxed)),
            |e| simplify(&e).expect("converges"),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
