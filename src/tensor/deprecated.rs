//! The old `try_` names of the movement, split and join ops, kept for
//! one release: every op returns `Result`, so none has the prefix
//! (`docs/CONVENTIONS.md`). Each forwards to the new name.

use super::Tensor;
use crate::error::Result;
use morok_core::dtype::Element;
use morok_core::shape::Slice;

impl Tensor {
    /// Deprecated name of [`Tensor::reshape`].
    #[deprecated(note = "renamed to `reshape`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_reshape(&self, shape: &[isize]) -> Result<Tensor> {
        self.reshape(shape)
    }

    /// Deprecated name of [`Tensor::permute`].
    #[deprecated(note = "renamed to `permute`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_permute(&self, perm: &[isize]) -> Result<Tensor> {
        self.permute(perm)
    }

    /// Deprecated name of [`Tensor::transpose`].
    #[deprecated(note = "renamed to `transpose`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_transpose(&self, a: isize, b: isize) -> Result<Tensor> {
        self.transpose(a, b)
    }

    /// Deprecated name of [`Tensor::broadcast_to`].
    #[deprecated(note = "renamed to `broadcast_to`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_broadcast_to(&self, shape: &[usize]) -> Result<Tensor> {
        self.broadcast_to(shape)
    }

    /// Deprecated name of [`Tensor::expand`].
    #[deprecated(note = "renamed to `expand`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_expand(&self, shape: &[isize]) -> Result<Tensor> {
        self.expand(shape)
    }

    /// Deprecated name of [`Tensor::pad`].
    #[deprecated(note = "renamed to `pad`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_pad<T: Element>(&self, pads: &[(isize, isize)], value: T) -> Result<Tensor> {
        self.pad(pads, value)
    }

    /// Deprecated name of [`Tensor::shrink`].
    #[deprecated(note = "renamed to `shrink`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_shrink(&self, bounds: &[(usize, usize)]) -> Result<Tensor> {
        self.shrink(bounds)
    }

    /// Deprecated name of [`Tensor::slice`].
    #[deprecated(note = "renamed to `slice`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_slice(&self, slices: &[Slice]) -> Result<Tensor> {
        self.slice(slices)
    }

    /// Deprecated name of [`Tensor::flip`].
    #[deprecated(note = "renamed to `flip`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_flip(&self, axes: &[isize]) -> Result<Tensor> {
        self.flip(axes)
    }

    /// Deprecated name of [`Tensor::squeeze`].
    #[deprecated(note = "renamed to `squeeze`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_squeeze(&self, dim: isize) -> Result<Tensor> {
        self.squeeze(dim)
    }

    /// Deprecated name of [`Tensor::unsqueeze`].
    #[deprecated(note = "renamed to `unsqueeze`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_unsqueeze(&self, dim: isize) -> Result<Tensor> {
        self.unsqueeze(dim)
    }

    /// Deprecated name of [`Tensor::flatten`].
    #[deprecated(note = "renamed to `flatten`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_flatten(&self, start: isize, end: isize) -> Result<Tensor> {
        self.flatten(start, end)
    }

    /// Deprecated name of [`Tensor::repeat`].
    #[deprecated(note = "renamed to `repeat`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_repeat(&self, reps: &[usize]) -> Result<Tensor> {
        self.repeat(reps)
    }

    /// Deprecated name of [`Tensor::split`].
    #[deprecated(note = "renamed to `split`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_split(&self, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
        self.split(sizes, dim)
    }

    /// Deprecated name of [`Tensor::chunk`].
    #[deprecated(note = "renamed to `chunk`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_chunk(&self, chunks: usize, dim: isize) -> Result<Vec<Tensor>> {
        self.chunk(chunks, dim)
    }

    /// Deprecated name of [`Tensor::cat`].
    #[deprecated(note = "renamed to `cat`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_cat(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        Tensor::cat(tensors, dim)
    }

    /// Deprecated name of [`Tensor::stack`].
    #[deprecated(note = "renamed to `stack`: no op has a `try_` prefix")]
    #[track_caller]
    pub fn try_stack(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        Tensor::stack(tensors, dim)
    }
}
