"""PPO with an LSTM policy: the batch comes back from a method of the agent as plain tensors; each epoch retains a graph nobody reuses."""
import torch
import torch.nn as nn
import torch.nn.functional as F

gamma = 0.98
eps_clip = 0.1
K_epoch = 2


class PPO(nn.Module):
    def __init__(self):
        super().__init__()
        self.data = []
        self.fc1 = nn.Linear(4, 64)
        self.fc_pi = nn.Linear(64, 2)
        self.fc_v = nn.Linear(64, 1)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=0.0005)

    def pi(self, x):
        return F.softmax(self.fc_pi(F.relu(self.fc1(x))), dim=-1)

    def v(self, x):
        return self.fc_v(F.relu(self.fc1(x)))

    def make_batch(self):
        s_lst, a_lst, r_lst, prob_lst = [], [], [], []
        for s, a, r, prob in self.data:
            s_lst.append(s)
            a_lst.append([a])
            r_lst.append([r])
            prob_lst.append([prob])
        s, a, r, prob_a = torch.tensor(s_lst, dtype=torch.float), torch.tensor(a_lst), \
            torch.tensor(r_lst), torch.tensor(prob_lst)
        self.data = []
        return s, a, r, prob_a

    def train_net(self):
        s, a, r, prob_a = self.make_batch()
        for i in range(K_epoch):
            v_s = self.v(s).squeeze(1)
            advantage = (r.squeeze(1) - v_s).detach()
            pi_a = self.pi(s).gather(1, a).squeeze(1)
            ratio = torch.exp(torch.log(pi_a) - torch.log(prob_a.squeeze(1)))
            surr1 = ratio * advantage
            surr2 = torch.clamp(ratio, 1 - eps_clip, 1 + eps_clip) * advantage
            loss = -torch.min(surr1, surr2) + F.smooth_l1_loss(v_s, r.squeeze(1))
            self.optimizer.zero_grad()
            loss.mean().backward(retain_graph=True)  # expect: TL005
            self.optimizer.step()
