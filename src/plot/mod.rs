//! Heatmaps drawn with plotters, generic over the drawing backend.
