//! Deliberate variations of the maths, to show why attention is built the way it is.
