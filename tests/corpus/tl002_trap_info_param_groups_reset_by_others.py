"""Parameter groups over two networks, each with its own learning rate; the networks' own optimizers
reset every gradient the group optimizer holds."""
import torch.nn as nn
import torch.optim as optim


def train(encoder, decoder, loader, epochs):
    opt_enc = optim.Adam(encoder.parameters(), lr=1e-4)
    opt_dec = optim.Adam(decoder.parameters(), lr=1e-4)
    opt_joint = optim.Adam(
        [
            {"params": encoder.parameters(), "lr": 1e-5},
            {"params": decoder.parameters(), "lr": 3e-5},
        ]
    )
    mse = nn.MSELoss()
    for epoch in range(epochs):
        for x, y in loader:
            opt_enc.zero_grad()
            opt_dec.zero_grad()
            z = encoder(x)
            recon_loss = mse(decoder(z), x)
            recon_loss.backward(retain_graph=True)
            opt_dec.step()
            latent_loss = mse(z, y)
            latent_loss.backward()
            opt_joint.step()
