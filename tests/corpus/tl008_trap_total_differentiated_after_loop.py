"""Losses added up over a loop of environments (or tasks) whose inner iterations differentiate each part, and
the total differentiated after the loop: the graph the total holds is the one backpropagated, on purpose."""
import torch
import torch.nn.functional as F
from torch import autograd


def gradient_alignment(network, optimizer, minibatches, penalty_weight):
    total_loss = 0
    grads = []
    for x, y in minibatches:
        env_loss = F.cross_entropy(network(x), y)
        total_loss += env_loss
        grads.append(autograd.grad(env_loss, network.parameters(), create_graph=True))
    mean_loss = total_loss / len(minibatches)
    mean_grad = autograd.grad(mean_loss, network.parameters(), retain_graph=True)
    penalty = 0
    for grad in grads:
        for g, mean_g in zip(grad, mean_grad):
            penalty += (g - mean_g).pow(2).sum()
    objective = mean_loss + penalty_weight * penalty
    optimizer.zero_grad()
    objective.backward()
    optimizer.step()
    return mean_loss.item()


def transfer_risk(classifiers, features, labels, optimizer, erm_loss):
    loss_swap = 0.0
    for q, classifier in enumerate(classifiers):
        loss_q = F.cross_entropy(classifier(features[q]), labels[q])
        grad_q = autograd.grad(loss_q, classifier.weight, create_graph=True)
        loss_swap += loss_q - torch.cat([g.flatten() for g in grad_q]).norm()
    loss_swap /= len(classifiers)
    loss_swap = erm_loss + loss_swap
    optimizer.zero_grad()
    loss_swap.backward()
    optimizer.step()


def scaled_total(model, scaler, optimizer, chunks):
    total = 0.0
    for x, y in chunks:
        part = F.mse_loss(model(x), y)
        autograd.grad(part, model.parameters(), retain_graph=True)
        total = total + part
    scaler.scale(total / len(chunks)).backward()
    scaler.step(optimizer)
    scaler.update()


def accelerated_total(model, accelerator, optimizer, chunks):
    total = 0.0
    for x, y in chunks:
        part = F.mse_loss(model(x), y)
        autograd.grad(part, model.parameters(), retain_graph=True)
        total += part
    accelerator.backward(total)
    optimizer.step()
