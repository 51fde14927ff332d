"""zgain: how much a latent z tells a CVAE about y beyond x."""
