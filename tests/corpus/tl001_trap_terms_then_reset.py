"""Loss terms summed in an inner loop, one backward per batch, the total reset after it."""


def train(model, loader, optimizer, compute_terms):
    loss = 0.0
    for step, batch in enumerate(loader):
        for term in compute_terms(model, batch):
            loss += term
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        loss = 0.0
